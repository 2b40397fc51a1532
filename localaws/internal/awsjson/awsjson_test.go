package awsjson

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	e := Errorf("ValidationException", "bad %s", "input")
	Write(rec, "application/x-amz-json-1.1", e)
	if rec.Code != http.StatusBadRequest || rec.Header().Get("X-Amzn-ErrorType") != "ValidationException" ||
		rec.Header().Get("Content-Type") != "application/x-amz-json-1.1" {
		t.Fatalf("status %d, headers %v", rec.Code, rec.Header())
	}
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body["__type"] != "ValidationException" || body["message"] != "bad input" {
		t.Errorf("body = %v", body)
	}
	if e.Error() != "ValidationException: bad input" {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestWriteFields(t *testing.T) {
	rec := httptest.NewRecorder()
	e := Errorf("ValidationException", "bad routing")
	e.Fields = map[string]string{"reason": "INVALID_ROUTING_CONFIGURATION", "message": "not this one"}
	Write(rec, "application/x-amz-json-1.0", e)
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if len(body) != 3 || body["__type"] != "ValidationException" || body["message"] != "bad routing" ||
		body["reason"] != "INVALID_ROUTING_CONFIGURATION" {
		t.Errorf("body = %v", body)
	}
}
