package gitcore

import (
	"reflect"
	"testing"
	"time"
)

func TestParseWorktreeList(t *testing.T) {
	out := "worktree /repo\x00HEAD 1111\x00branch refs/heads/main\x00\x00" +
		"worktree /data/tree with space\x00HEAD 2222\x00detached\x00locked reason\x00\x00" +
		"worktree /gone/tr\u00e9e\tx\x00HEAD 3333\x00branch refs/heads/agency/x-1\x00prunable gitdir file points to non-existent location\x00\x00"
	got := parseWorktreeList([]byte(out))
	want := []Worktree{
		{Path: "/repo", Head: "1111", Branch: "refs/heads/main"},
		{Path: "/data/tree with space", Head: "2222", Detached: true, Locked: true},
		{Path: "/gone/tr\u00e9e\tx", Head: "3333", Branch: "refs/heads/agency/x-1", Prunable: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestParseStatusV2(t *testing.T) {
	out := "# branch.oid abc\x00# branch.head main\x00" +
		"1 .M N... 100644 100644 100644 aaa aaa file with space.txt\x00" +
		"1 AM N... 000000 100644 100644 000 bbb .env\x00" +
		"2 R. N... 100644 100644 100644 aaa aaa R100 new name\x00old\tname\x00" +
		"u UU N... 100644 100644 100644 100644 a b c conflict.go\x00" +
		"? d\u00ef r/untracked\nnewline\x00" +
		"! ignored.log\x00"
	got, err := parseStatusV2([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []StatusEntry{
		{Kind: StatusChanged, XY: ".M", Path: "file with space.txt", Sub: "N...", IndexMode: "100644", IndexOID: "aaa"},
		{Kind: StatusChanged, XY: "AM", Path: ".env", NotInHead: true, Sub: "N...", IndexMode: "100644", IndexOID: "bbb"},
		{Kind: StatusRenamed, XY: "R.", Path: "new name", Orig: "old\tname", NotInHead: true},
		{Kind: StatusUnmerged, XY: "UU", Path: "conflict.go"},
		{Kind: StatusUntracked, XY: "??", Path: "d\u00ef r/untracked\nnewline"},
		{Kind: StatusIgnored, XY: "!!", Path: "ignored.log"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, err := parseStatusV2([]byte("1 short\x00")); err == nil {
		t.Error("malformed entry accepted")
	}
}

func TestConfig(t *testing.T) {
	c := NewConfig(parseConfigZ([]byte("agency.editor\nvim\x00agency.runner.Mine.command\nbash\x00" +
		"agency.runner.Mine.headlessarg\n-c\x00agency.checkpoint.denylist\n*.secret\x00" +
		"agency.checkpoint.denylist\n*.p12\x00agency.checkpoint.debounce\n2s\x00agency.flag\x00agency.maxactive\nx\x00")))
	if v, ok := c.Get("agency.editor"); !ok || v != "vim" {
		t.Errorf("editor = %q %v", v, ok)
	}
	if v, _ := c.Get("agency.runner.Mine.headlessArg"); v != "-c" {
		t.Errorf("case-insensitive variable: %q", v)
	}
	if _, ok := c.Get("agency.runner.mine.command"); ok {
		t.Error("subsections are case-sensitive")
	}
	if got := c.GetAll("agency.checkpoint.denylist"); !reflect.DeepEqual(got, []string{"*.secret", "*.p12"}) {
		t.Errorf("GetAll = %q", got)
	}
	if d, ok := c.Duration("agency.checkpoint.debounce", time.Second); !ok || d != 2*time.Second {
		t.Errorf("Duration = %v %v", d, ok)
	}
	if _, ok := c.Int("agency.maxActive", 0); ok {
		t.Error("invalid int accepted")
	}
	if v, ok := c.Get("agency.flag"); !ok || v != "" {
		t.Errorf("valueless key = %q %v", v, ok)
	}
	if got := c.Subsections("agency.runner"); !reflect.DeepEqual(got, []string{"Mine"}) {
		t.Errorf("Subsections = %q", got)
	}
}

func TestCleanEnv(t *testing.T) {
	env := cleanEnv([]string{"GIT_DIR=/x", "GIT_INDEX_FILE=/i", "GIT_CONFIG_PARAMETERS='a.b'='c'", "HOME=/h", "LC_ALL=fr"}, "X=1")
	want := []string{"GIT_CONFIG_PARAMETERS='a.b'='c'", "HOME=/h", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "X=1"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("cleanEnv = %q", env)
	}
}
