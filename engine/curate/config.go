package curate

import "fmt"

// Config holds the thresholds of the method. The defaults were chosen on the
// labelled set in testdata (docs/curation.md); the config file's [curate]
// table overrides them.
type Config struct {
	// MinOverlap is the floor every pair must reach: the Jaccard similarity of
	// the two records' content words (values left out). Pairs below it are never
	// compared further, which is what makes candidate search cheap and exact.
	MinOverlap float64 `toml:"min_overlap" json:"min_overlap"`
	// Repeat is the similarity at or above which two records with the same
	// values are a repeat.
	Repeat float64 `toml:"repeat" json:"repeat"`
	// Conflict is the similarity at or above which two records whose values
	// differ (a number, version, date, name or negation) are a conflict.
	Conflict float64 `toml:"conflict" json:"conflict"`
	// Swap is the similarity at or above which one word swapped for another
	// (and nothing else changed) is a conflict rather than a rewording.
	Swap float64 `toml:"swap" json:"swap"`
	// MinWords is the fewest content words a record needs to be clustered;
	// shorter records say too little to tell a repeat from a coincidence.
	MinWords int `toml:"min_words" json:"min_words"`
}

// MaxLiveScope is the most records a TUI session clusters and keeps up to
// date from the change feed: each is held in its index (docs/curation.md).
const MaxLiveScope = 50_000

// DefaultConfig answers the thresholds chosen on the labelled set.
func DefaultConfig() Config {
	return Config{MinOverlap: 0.7, Repeat: 0.7, Conflict: 0.9, Swap: 0.85, MinWords: 3}
}

// Validate refuses thresholds outside 0..1, a floor above a threshold, or a
// negative word count, naming the setting.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"min_overlap", c.MinOverlap}, {"repeat", c.Repeat}, {"conflict", c.Conflict}, {"swap", c.Swap}} {
		if f.v <= 0 || f.v > 1 {
			return fmt.Errorf("curate.%s is %g; it must be above 0 and at most 1", f.name, f.v)
		}
	}
	if c.MinOverlap > c.Repeat || c.MinOverlap > c.Conflict {
		return fmt.Errorf("curate.min_overlap (%g) must not exceed curate.repeat (%g) or curate.conflict (%g)", c.MinOverlap, c.Repeat, c.Conflict)
	}
	if c.MinWords < 1 {
		return fmt.Errorf("curate.min_words is %d; it must be at least 1", c.MinWords)
	}
	return nil
}
