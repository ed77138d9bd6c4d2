package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/config"
)

// TestInfoNamesWhereEachSettingCameFrom: info --json says which flag,
// variable or file set each value, and never shows the token; on a terminal
// it lists the settings somebody set.
func TestInfoNamesWhereEachSettingCameFrom(t *testing.T) {
	c := newTestCLI(t)
	cfgPath := filepath.Join(c.home, "mine.toml")
	if err := os.WriteFile(cfgPath, []byte("theme = \"plain\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MNEMO_DB", c.db)
	t.Setenv("MNEMO_TOKEN", "tok-do-not-print")
	var out, errOut bytes.Buffer
	if code := run([]string{"--config", cfgPath, "store"}, strings.NewReader(styleLearning), &out, &errOut); code != 0 {
		t.Fatalf("store: exit %d: %s", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"--config", cfgPath, "info", "--json"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("info: exit %d: %s", code, errOut.String())
	}
	if strings.Contains(out.String(), "tok-do-not-print") {
		t.Fatalf("info shows the token:\n%s", out.String())
	}
	var info struct {
		Store    string                    `json:"store"`
		Config   string                    `json:"config"`
		Settings map[string]config.Setting `json:"settings"`
	}
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string]config.Setting{
		"store":  {Value: c.db, Source: "env MNEMO_DB"},
		"config": {Value: cfgPath, Source: "flag --config"},
		"theme":  {Value: "plain", Source: "config file " + cfgPath},
		"token":  {Value: "(set, not shown)", Source: "env MNEMO_TOKEN"},
		"remote": {Value: "", Source: "default"},
		"log":    {Value: filepath.Join(c.home, "state_home", "mnemo", "mnemo.log"), Source: "env XDG_STATE_HOME"},
	}
	for k, w := range want {
		if got := info.Settings[k]; got != w {
			t.Errorf("settings[%s] = %+v, want %+v", k, got, w)
		}
	}
	if info.Store != c.db || info.Config != cfgPath {
		t.Errorf("store %q, config %q", info.Store, info.Config)
	}

	// The --db flag wins over MNEMO_DB, and says so.
	var flagged struct {
		Settings map[string]config.Setting `json:"settings"`
	}
	c.okJSON(&flagged, "", "info")
	if got := flagged.Settings["store"]; got != (config.Setting{Value: c.db, Source: "flag --db"}) {
		t.Errorf("with --db: store %+v", got)
	}

	human := visible(c.onPTY(120, colourTerm(), false, "", "--config", cfgPath, "info").screen)
	for _, line := range []string{
		"CONFIG  VALUE", "store   " + c.db, "flag --db", "theme   plain", "config file /", "token   (set, not shown)", "env MNEMO_TOKEN",
	} {
		if !strings.Contains(human, line) {
			t.Errorf("no %q in the human form:\n%s", line, human)
		}
	}
	if strings.Contains(human, "tok-do-not-print") || strings.Contains(human, "remote") || strings.Contains(human, "mouse") {
		t.Errorf("the human form shows the token or a default:\n%s", human)
	}
}
