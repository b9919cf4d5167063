// Package mockllm is a tiny model server that lets the real claude and codex
// CLIs run offline for end-to-end tests (make e2e-real). It speaks just
// enough of two APIs:
//
//   - Anthropic Messages: POST …/v1/messages (SSE when "stream" is true,
//     else JSON) and POST …/v1/messages/count_tokens;
//   - OpenAI Responses: POST …/responses (SSE).
//
// The script is a two-step agent loop: a request that offers tools and
// carries no tool result yet gets a tool call that creates Config.File with
// Config.Content; any later request gets Config.Final as text. Requests that
// offer no tools (titles, summaries) get a short text.
//
// A marker in the latest user prompt picks another script:
//
//	@@RECALL@@  no tool call: the answer quotes the first user prompt of the
//	            conversation and counts its prompts ("RECALL: first prompt
//	            was <<…>>; N user prompts in history"), which proves that a
//	            resumed conversation carried its history
//	@@BASH@@    a shell tool call (touch bash.txt) instead of the file
//	            write; headless claude with --permission-mode default is
//	            refused it (a permission denial)
//	@@SHELL@@ C a shell tool call running C, the rest of the prompt (say,
//	            "echo x > f && git add f && git commit -qm agent", to see a
//	            commit made by the agent's own tool)
//	@@ESCALATE@@ C  as @@SHELL@@, and codex's call asks to run C outside
//	            its sandbox (sandbox_permissions require_escalated): codex
//	            asks for approval first
//	@@WRITE@@ P the file write goes to path P (the word after the marker)
//	            instead of Config.File; an absolute P tries a write outside
//	            the agent's working directory
//
// The tool call is made once per prompt: a later prompt of the same
// conversation gets its own.
//
// A prefix on the base URL picks a failure mode:
//
//	/failNNN/…  answer every request with HTTP NNN and an error body
//	/hang/…     read the request and never answer
//	/stall/…    send the headers and the first SSE event, then nothing
//
// Hanging requests end when the client goes away, after Config.HangFor, or
// at Close. The server only ever listens on a loopback address.
package mockllm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config is the script. Zero fields take the defaults shown.
type Config struct {
	File    string        // "hello.txt"; relative to the agent's working directory
	Content string        // "hello from mock\n"
	Final   string        // "Done: wrote the file."
	HangFor time.Duration // 15 minutes
}

// Request is one request the server answered, for tests to inspect.
type Request struct {
	Method string
	Path   string
	Status int    // 0 when never answered (hang)
	Reply  string // "tool_call <name>", "text", "fail", "stall", "hang", "not found", …
}

// Server is a running mock. Start it with Start, stop it with Close.
type Server struct {
	cfg  Config
	ln   net.Listener
	http *http.Server
	done chan struct{} // closed by Close: releases hanging handlers
	once sync.Once
	mu   sync.Mutex
	log  []Request
	ids  int
}

// Start listens on addr ("127.0.0.1:0" picks a free port) with the default
// script.
func Start(addr string) (*Server, error) { return StartConfig(addr, Config{}) }

// StartConfig listens on addr, which must be a loopback address, and serves
// cfg in the background.
func StartConfig(addr string, cfg Config) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("mockllm: refusing to listen on non-loopback address %q", addr)
	}
	if cfg.File == "" {
		cfg.File = "hello.txt"
	}
	if cfg.Content == "" {
		cfg.Content = "hello from mock\n"
	}
	if cfg.Final == "" {
		cfg.Final = "Done: wrote the file."
	}
	if cfg.HangFor <= 0 {
		cfg.HangFor = 15 * time.Minute
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}

	s := &Server{cfg: cfg, ln: ln, done: make(chan struct{})}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(ln)
	return s, nil
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// URL is the base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return "http://" + s.Addr() }

// Close stops the server and releases hanging requests.
func (s *Server) Close() error {
	err := s.http.Close()
	s.once.Do(func() { close(s.done) })
	return err
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

func (s *Server) record(r *http.Request, status int, reply string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Status: status, Reply: reply})
}

func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s%020d", prefix, s.ids)
}

var failRE = regexp.MustCompile(`^/fail(\d{3})/`)

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{}
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		_ = json.Unmarshal(b, &body)
	}

	path := r.URL.Path
	responses := strings.HasSuffix(path, "/responses")
	switch {
	case failRE.MatchString(path):
		code, _ := strconv.Atoi(failRE.FindStringSubmatch(path)[1])
		writeJSON(w, code, errorBody("api_error", fmt.Sprintf("mock: forced HTTP %d", code)))
		s.record(r, code, "fail")
	case strings.HasPrefix(path, "/hang/"):
		s.record(r, 0, "hang")
		s.hang(r.Context())
	case strings.HasPrefix(path, "/stall/"):
		sw := startSSE(w)
		if responses {
			sw.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{
				"id": "resp_stall", "object": "response", "status": "in_progress", "output": []any{}}})
		} else {
			sw.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
				"id": "msg_stall", "type": "message", "role": "assistant", "model": str(body["model"]),
				"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
				"usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}})
		}

		s.record(r, 200, "stall")
		s.hang(r.Context())
	case r.Method != http.MethodPost:
		writeJSON(w, 404, errorBody("not_found_error", "mock: no "+path))
		s.record(r, 404, "not found")
	case strings.HasSuffix(path, "/v1/messages/count_tokens"):
		writeJSON(w, 200, map[string]any{"input_tokens": 42})
		s.record(r, 200, "count_tokens")
	case strings.HasSuffix(path, "/v1/messages"):
		s.record(r, 200, s.messages(w, body))
	case responses:
		s.record(r, 200, s.responses(w, body))
	default:
		writeJSON(w, 404, errorBody("not_found_error", "mock: no "+path))
		s.record(r, 404, "not found")
	}
}

// hang blocks until the client leaves, the server closes or HangFor passes,
// then drops the connection without completing the response.
func (s *Server) hang(ctx context.Context) {
	t := time.NewTimer(s.cfg.HangFor)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-s.done:
	case <-t.C:
	}
	panic(http.ErrAbortHandler) // net/http closes the connection quietly
}

func errorBody(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	w.Write(b)
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &sse{w: w, f: f}
	s.flush()
	return s
}

func (s *sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	s.flush()
}

func (s *sse) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// str returns v if it is a string, else "".
func str(v any) string { s, _ := v.(string); return s }

// flatten concatenates every string inside a decoded JSON value.
func flatten(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return b.String()
}

// toolNames lists the names of the tools a request offers, keyed to their
// definitions (Anthropic "name", OpenAI "name" or "function.name").
func toolNames(body map[string]any) map[string]map[string]any {
	names := map[string]map[string]any{}
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		m, _ := t.(map[string]any)
		name := str(m["name"])
		if fn, ok := m["function"].(map[string]any); ok && name == "" {
			name = str(fn["name"])
		}
		if name != "" {
			names[name] = m
		}
	}

	return names
}

func shquote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// shellScript is a shell command writing Config.Content to path.
func (s *Server) shellScript(path string) string {
	return "printf '%s' " + shquote(s.cfg.Content) + " > " + shquote(path)
}

// Scenario markers (see the package comment).
const (
	MarkRecall   = "@@RECALL@@"
	MarkBash     = "@@BASH@@"
	MarkShell    = "@@SHELL@@"
	MarkEscalate = "@@ESCALATE@@"
	MarkWrite    = "@@WRITE@@"
)

// BashCommand is the command of the @@BASH@@ scenario.
const BashCommand = "touch bash.txt"

// toolAsk is the tool call a prompt asks for: a shell command (Shell set)
// or a write of Config.Content to Path.
type toolAsk struct {
	Shell    string
	Escalate bool
	Path     string
}

// ask reads the tool call the latest prompt asks for (see the markers).
func (s *Server) ask(prompt string) toolAsk {
	if _, rest, ok := strings.Cut(prompt, MarkShell); ok && strings.TrimSpace(rest) != "" {
		return toolAsk{Shell: strings.TrimSpace(rest)}
	}
	if _, rest, ok := strings.Cut(prompt, MarkEscalate); ok && strings.TrimSpace(rest) != "" {
		return toolAsk{Shell: strings.TrimSpace(rest), Escalate: true}
	}
	if strings.Contains(prompt, MarkBash) {
		return toolAsk{Shell: BashCommand}
	}

	if _, rest, ok := strings.Cut(prompt, MarkWrite); ok {
		if f := strings.Fields(rest); len(f) > 0 {
			return toolAsk{Path: f[0]}
		}
	}

	return toolAsk{Path: s.cfg.File}
}

// recall is the @@RECALL@@ answer for a conversation's user prompts.
func recall(prompts []string) string {
	first := ""
	if len(prompts) > 0 {
		first = prompts[0]
		if r := []rune(first); len(r) > 200 {
			first = string(r[:200])
		}
	}
	return fmt.Sprintf("RECALL: first prompt was <<%s>>; %d user prompts in history", first, len(prompts))
}

// last is the latest of a conversation's prompts ("" for none).
func last(prompts []string) string {
	if len(prompts) == 0 {
		return ""
	}
	return prompts[len(prompts)-1]
}

// ownPrompt tells a user's own prompt from what a CLI adds to the
// conversation in the user's name (system reminders, environment context,
// AGENTS.md).
func ownPrompt(text string) bool {
	t := strings.TrimSpace(text)
	head := t
	if len(head) > 200 {
		head = head[:200]
	}
	return t != "" && !strings.HasPrefix(t, "<") && !strings.HasPrefix(t, "[") && !strings.Contains(head, "AGENTS.md")
}
