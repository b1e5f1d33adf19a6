package gatepost_test

// Retries against a tiny local HTTP server: a 429 with Retry-After, then a success; a server
// failing every time, tried a bounded number of times; a refused connection, never a hang.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gatepost "github.com/gatepost/gatepost-go"
)

func TestRetriesA429AfterItsRetryAfterThenSucceeds(t *testing.T) {
	var calls int32
	var keys [2]string
	var seen [2]time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := atomic.AddInt32(&calls, 1)
		if n <= 2 {
			keys[n-1], seen[n-1] = r.Header.Get("Idempotency-Key"), time.Now()
		}
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":"rate_limited","message":"Over the tenant's sends per second."}}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"id":"msg_retried","status":"queued","to":"a@example.com","created_at":"2026-01-01T00:00:00.000Z","send_at":null,"sandbox":true}`))
	}))
	defer srv.Close()
	client := gatepost.New("gp_test_x", gatepost.WithBaseURL(srv.URL), gatepost.WithBackoff(time.Millisecond))
	res, err := client.Send(context.Background(), gatepost.SendRequest{To: "a@example.com", Subject: "s", HTML: "<p>s</p>"})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if res.ID != "msg_retried" || atomic.LoadInt32(&calls) != 2 {
		t.Fatalf("answer %+v after %d calls; want msg_retried after 2", res, calls)
	}
	// Retry-After: 1 was honoured (the backoff alone is a millisecond), with the same key both times.
	if gap := seen[1].Sub(seen[0]); gap < 900*time.Millisecond {
		t.Fatalf("retried %v after the 429; Retry-After asked for 1 s", gap)
	}
	if keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("idempotency keys %q; want one key, the same on the retry", keys)
	}
}

func TestGivesUpAfterTheLastAttemptWithTheCodedError(t *testing.T) {
	var calls int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt32(&calls, 1)
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"code":"storage_unavailable","message":"The message store cannot commit."}}`))
	}))
	defer srv.Close()
	client := gatepost.New("gp_live_x", gatepost.WithBaseURL(srv.URL), gatepost.WithBackoff(time.Millisecond))
	_, err := client.GetMessage(context.Background(), "msg_x")
	var apiErr *gatepost.Error
	if !errors.As(err, &apiErr) || apiErr.Code != "storage_unavailable" || apiErr.Status != 503 {
		t.Fatalf("err %v; want a 503 storage_unavailable *Error", err)
	}
	if calls != gatepost.DefaultMaxAttempts {
		t.Fatalf("%d calls; want %d", calls, gatepost.DefaultMaxAttempts)
	}
}

func TestANonJSONAnswerIsATypedError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`<html>a proxy's page</html>`))
	}))
	defer srv.Close()
	_, err := gatepost.New("k", gatepost.WithBaseURL(srv.URL)).GetMessage(context.Background(), "msg_x")
	if !gatepost.IsCode(err, gatepost.CodeInvalidResponse) {
		t.Fatalf("err %v; want invalid_response", err)
	}
}

func TestAServerThatIsDownIsAnErrorAfterBoundedRetries(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: each attempt is refused
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := gatepost.New("k", gatepost.WithBaseURL("http://"+addr), gatepost.WithBackoff(time.Millisecond))
	_, err = client.ListTemplates(ctx)
	var netErr *net.OpError
	if !errors.As(err, &netErr) || ctx.Err() != nil {
		t.Fatalf("err %v; want the connection error, before the context's deadline", err)
	}
}

func TestAnAnswerThatNeverComesTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	client := gatepost.New("k", gatepost.WithBaseURL(srv.URL), gatepost.WithTimeout(200*time.Millisecond),
		gatepost.WithMaxAttempts(2), gatepost.WithBackoff(time.Millisecond))
	_, err := client.GetTemplate(context.Background(), "t")
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("err %v; want a timeout", err)
	}
}

func TestACSVFileIsSentAgainWholeAfterA429(t *testing.T) {
	var calls int32
	var bodies [2]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := atomic.AddInt32(&calls, 1)
		body, _ := io.ReadAll(r.Body)
		if n <= 2 {
			bodies[n-1] = r.Header.Get("Content-Type") + " " + string(body)
		}
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":"rate_limited","message":"Slow down."}}`))
			return
		}
		w.Write([]byte(`{"added":1,"updated":0,"refused_count":0,"refused":[]}`))
	}))
	defer srv.Close()
	client := gatepost.New("gp_live_x", gatepost.WithBaseURL(srv.URL), gatepost.WithBackoff(time.Millisecond))
	report, err := client.ImportContacts(context.Background(), "aud_1", strings.NewReader("email\nann@example.com\n"))
	if err != nil || report.Added != 1 {
		t.Fatalf("report %+v, %v", report, err)
	}
	want := "text/csv email\nann@example.com\n"
	if atomic.LoadInt32(&calls) != 2 || bodies[0] != want || bodies[1] != want {
		t.Fatalf("%d calls with %q; want 2 with %q", calls, bodies, want)
	}
}
