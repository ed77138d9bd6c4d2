// Package retrieval holds the ranking parts every mnemo engine shares: text
// embedders (a deterministic offline hashed n-gram embedder and an
// OpenAI-compatible /v1/embeddings client), an exact in-memory vector index
// (float32 or int8, parallel over cores, filters applied inside the search),
// reciprocal rank fusion for hybrid fetch, and answer synthesis for recall (an
// extractive answerer and an OpenAI-compatible /v1/chat/completions client).
//
// Nothing here touches storage: engines own their records and hand texts,
// vectors and citations to these parts.
package retrieval
