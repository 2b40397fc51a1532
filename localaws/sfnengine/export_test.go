package sfnengine

// BytesWritten returns how many bytes s has written to files.
func BytesWritten(s *FileStore) int64 { return s.written.Load() }
