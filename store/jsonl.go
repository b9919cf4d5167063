package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"syscall"
)

// AppendLine is appendLine for the JSONL files other packages write
// (logs/hook.jsonl).
func AppendLine(path string, line []byte) error { return appendLine(path, line, false) }

// StartFreshLine ends a file's last line when it was cut short (a writer
// killed mid-line, a full disk), so that what a writer appends next starts
// a line of its own (logs/stream.jsonl, appended to by each turn). A
// missing or empty file is left as it is. Like OpenLog it never follows a
// link nor writes anything but a regular file: a walled agent can write
// its logs directory.
func StartFreshLine(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}

	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil || last[0] == '\n' {
		return err
	}

	_, err = f.Write([]byte{'\n'})
	return err
}

// DamagedLines counts the lines of a JSONL file that do not decode as JSON:
// garbage, or a line cut short (with complete, the last line without its
// newline counts too; a writer may be writing it). A missing file has none.
func DamagedLines(path string, complete bool) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, err
	}

	bad := 0
	for len(data) > 0 {
		line, rest, found := bytes.Cut(data, []byte{'\n'})
		data = rest
		if !found && !complete {
			break
		}
		if !found || (len(bytes.TrimSpace(line)) > 0 && !json.Valid(line)) {
			bad++
		}
	}

	return bad, nil
}

// appendLine appends line (without its newline) to the file at path with
// one write under O_APPEND, so concurrent writers never interleave. When
// the file does not end in a newline (a writer killed mid-line, a full
// disk) the line starts on a fresh one, so it is not lost with the cut
// one. With sync the file is fsynced after. Errors are the os package's.
func appendLine(path string, line []byte, sync bool) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	line = append(line, '\n')
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}

	if _, err := f.Write(line); err != nil {
		return err
	}
	if sync {
		return f.Sync()
	}

	return nil
}

// readLines returns the newline-terminated lines of the file at path (a
// last line cut short is left out). A missing file has none.
func readLines(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}

	var out [][]byte
	start := 0
	for i, b := range data {
		if b == '\n' {
			out = append(out, data[start:i])
			start = i + 1
		}
	}

	return out, nil
}
