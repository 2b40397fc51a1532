package jsonvalue

// DecodeSlow is encoding/json's reading of a document, the reference for Decode.
var DecodeSlow = decodeSlow
