package index

import (
	"github.com/blevesearch/bleve/v2/document"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// multiTermField is an unstored field holding a list of exact terms. Bleve's
// own keyword fields take one value each, so a record's two dozen metadata
// values would be two dozen field objects, each with its own token map and,
// per segment, its own dictionary; this is one of each.
type multiTermField struct {
	name    string
	terms   []string
	options bleveindex.FieldIndexingOptions
	freqs   bleveindex.TokenFrequencies
	bytes   uint64
}

var _ document.Field = (*multiTermField)(nil)

func newMultiTermField(name string, terms []string, options bleveindex.FieldIndexingOptions) *multiTermField {
	return &multiTermField{name: name, terms: terms, options: options}
}

func (f *multiTermField) Name() string                                          { return f.name }
func (f *multiTermField) ArrayPositions() []uint64                              { return nil }
func (f *multiTermField) Options() bleveindex.FieldIndexingOptions              { return f.options }
func (f *multiTermField) Value() []byte                                         { return nil }
func (f *multiTermField) NumPlainTextBytes() uint64                             { return f.bytes }
func (f *multiTermField) EncodedFieldType() byte                                { return 't' }
func (f *multiTermField) AnalyzedLength() int                                   { return len(f.terms) }
func (f *multiTermField) AnalyzedTokenFrequencies() bleveindex.TokenFrequencies { return f.freqs }

// Size approximates the memory held, for Bleve's batch accounting.
func (f *multiTermField) Size() int {
	n := 64 + len(f.name)
	for _, t := range f.terms {
		n += 16 + 2*len(t)
	}
	return n
}

// Analyze records each distinct term once; SkipFreqNorm leaves frequencies
// at zero exactly as Bleve's own analysis does for such fields.
func (f *multiTermField) Analyze() {
	freqs := make(bleveindex.TokenFrequencies, len(f.terms))
	var total uint64
	for _, t := range f.terms {
		total += uint64(len(t))
		if tf, seen := freqs[t]; seen {
			if !f.options.SkipFreqNorm() {
				tf.SetFrequency(tf.Frequency() + 1)
			}
			continue
		}
		tf := &bleveindex.TokenFreq{Term: []byte(t)}
		if !f.options.SkipFreqNorm() {
			tf.SetFrequency(1)
		}
		freqs[t] = tf
	}
	f.freqs = freqs
	f.bytes = total
}
