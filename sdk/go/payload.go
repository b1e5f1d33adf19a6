package gatepost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// payload is what a request sends: its Content-Type and how to read it for each attempt.
type payload struct {
	contentType string
	// open answers a reader of the whole body (nil: none) and its length (-1: unknown, chunked).
	open func() (io.Reader, int64, error)
	// replayable: the body can be sent again, so the request may be retried.
	replayable bool
}

// upload is a body sent as it is (a CSV file), not as JSON. An io.Seeker (an *os.File, a
// bytes.Reader) is sent again from where it stood for a retry; any other reader (a pipe) is
// sent once, chunked.
type upload struct {
	contentType string
	r           io.Reader
}

func payloadOf(body any) (payload, error) {
	switch b := body.(type) {
	case nil:
		return payload{open: func() (io.Reader, int64, error) { return nil, 0, nil }, replayable: true}, nil
	case upload:
		return uploadPayload(b)
	default:
		encoded, err := json.Marshal(body)
		if err != nil {
			return payload{}, fmt.Errorf("gatepost: encoding the request: %w", err)
		}
		open := func() (io.Reader, int64, error) { return bytes.NewReader(encoded), int64(len(encoded)), nil }
		return payload{contentType: "application/json", open: open, replayable: true}, nil
	}
}

func uploadPayload(u upload) (payload, error) {
	// The reader is handed on without its Close: net/http closes a request body it is given.
	unclosable := struct{ io.Reader }{u.r}
	seeker, ok := u.r.(io.Seeker)
	var start int64
	var err error
	if ok {
		start, err = seeker.Seek(0, io.SeekCurrent) // fails on a pipe, an *os.File too
	}
	if !ok || err != nil {
		return payload{contentType: u.contentType, open: func() (io.Reader, int64, error) { return unclosable, -1, nil }}, nil
	}
	end, err := seeker.Seek(0, io.SeekEnd)
	if err != nil {
		return payload{}, fmt.Errorf("gatepost: reading the request body: %w", err)
	}
	open := func() (io.Reader, int64, error) {
		_, err := seeker.Seek(start, io.SeekStart)
		return unclosable, end - start, err
	}
	return payload{contentType: u.contentType, open: open, replayable: true}, nil
}
