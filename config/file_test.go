package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/curate"
)

func TestParseConfig(t *testing.T) {
	full := `
store = "/srv/mnemo"
remote = "http://127.0.0.1:7077"
theme = "plain"
mouse = true

[embedder]
endpoint = "http://localhost:11434/v1"
model = "nomic-embed-text"
api_key_env = "OLLAMA_KEY"

[answer]
endpoint = "https://api.example.com/v1"
model = "small"
api_key_env = "ANSWER_KEY"

[keys]
quit = ["q", "ctrl+c"]
forget = ["d"]
`
	cfg, err := Parse("config.toml", []byte(full))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if cfg.Store != "/srv/mnemo" || cfg.Remote != "http://127.0.0.1:7077" || cfg.Theme != "plain" || cfg.Mouse == nil || !*cfg.Mouse {
		t.Errorf("top-level keys: %+v", cfg)
	}
	if cfg.Embedder.Model != "nomic-embed-text" || cfg.Answer.APIKeyEnv != "ANSWER_KEY" {
		t.Errorf("endpoints: %+v %+v", cfg.Embedder, cfg.Answer)
	}
	if got := strings.Join(cfg.Keys["quit"], ","); got != "q,ctrl+c" {
		t.Errorf("keys.quit = %q", got)
	}

	bad := []struct {
		name, text, want string
	}{
		{"unknown top-level key", "stor = \"/x\"\n", `config.toml: unknown key "stor" (line 1)`},
		{"unknown nested key", "[embedder]\nendpoint = \"http://x\"\nmodle = \"m\"\n", `config.toml: unknown key "embedder.modle" (line 3)`},
		{"unknown table", "[colors]\nfg = 1\n", `unknown key "colors"`},
		{"wrong type", "mouse = \"yes\"\n", "config.toml:1:"},
		{"keys not a list", "[keys]\nquit = \"q\"\n", "config.toml:2:"},
		{"syntax", "store = \n", "config.toml:1:"},
		{"endpoint not a URL", "[answer]\nendpoint = \"localhost:8080\"\n", `[answer] endpoint "localhost:8080" must be an http:// or https:// URL`},
		{"model without endpoint", "[embedder]\nmodel = \"m\"\n", "[embedder] sets model or api_key_env but no endpoint"},
		{"curate threshold out of range", "[curate]\nrepeat = 1.5\n", "[curate] curate.repeat is 1.5; it must be above 0 and at most 1"},
		{"curate unknown key", "[curate]\nrepeats = 0.5\n", `unknown key "curate.repeats" (line 2)`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.toml", []byte(tt.text))
			if err == nil {
				t.Fatalf("accepted %q", tt.text)
			}
			if contract.KindOf(err) != contract.KindConfig {
				t.Errorf("kind %q, want configuration error", contract.KindOf(err))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestCurateConfig: the [curate] table overrides the thresholds it names and
// keeps the defaults of the others; no table means the defaults.
func TestCurateConfig(t *testing.T) {
	cfg, err := Parse("config.toml", []byte("[curate]\nconflict = 0.95\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := curate.DefaultConfig()
	want.Conflict = 0.95
	if got := cfg.CurateConfig(); got != want {
		t.Errorf("curate config %+v, want %+v", got, want)
	}
	if got := (File{}).CurateConfig(); got != curate.DefaultConfig() {
		t.Errorf("no [curate] table: %+v, want the defaults", got)
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if _, err := Load(path, false); err != nil {
		t.Errorf("a missing default config is not an error: %v", err)
	}
	_, err := Load(path, true)
	if err == nil || !strings.Contains(err.Error(), "config file "+path+" does not exist") {
		t.Errorf("a missing --config file: %v", err)
	}
	if err := os.WriteFile(path, []byte("theme = \"default\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, true)
	if err != nil || cfg.Theme != "default" {
		t.Errorf("load: %+v, %v", cfg, err)
	}
}

// TestThemeIsHonouredOrRefused: theme "plain" draws ASCII like --plain, and
// a theme that does not exist is refused with the ones that do.
func TestThemeIsHonouredOrRefused(t *testing.T) {
	for _, tc := range []struct {
		text string
		err  string
	}{
		{`theme = "plain"`, ""},
		{`theme = "default"`, ""},
		{`theme = "solarized"`, `theme "solarized" is not a theme: "default" (the terminal's 16 ANSI colours) or "plain" (ASCII borders and glyphs)`},
	} {
		cfg, err := Parse("config.toml", []byte(tc.text))
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.text, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v (config %+v), want %q", tc.text, err, cfg, tc.err)
		}
	}
}
