// tlog-verifier checks what annals publishes about its log with an implementation that owes nothing to annals:
// checkpoints' signatures with golang.org/x/mod/sumdb/note, tree hashes, inclusion and consistency proofs with
// golang.org/x/mod/sumdb/tlog. It reads files the service and its command line write:
//
//	tlog-verifier tree --checkpoint FILE --vkey VKEY --log LOG.ndjson
//	    recomputes every leaf from the log (`annals log export` NDJSON), and that the first <size> leaves hash to
//	    the checkpoint's root; FILE is a signed note, or a checkpoints.ndjson (its last checkpoint)
//	tlog-verifier inclusion --proof PROOF.json --vkey VKEY     (`annals audit proof inclusion --json`)
//	tlog-verifier consistency --proof PROOF.json --vkey VKEY   (`annals audit proof consistency --json`)
//	tlog-verifier cosigned --checkpoint FILE --vkey VKEY --witness WITNESS_VKEY [--cosignature LINE]
//	    the checkpoint is signed by the log and cosigned (cosignature/v1) by the witness
//	tlog-verifier export --export BUNDLE.ndjson --vkey VKEY [--vkey VKEY ...]   (`annals audit export`)
//	    the bundle's checkpoint is signed by one of the log's keys, every event and actor line is in its tree
//	    (its leaf recomputed from the line, its inclusion path checked), and the end line's Ed25519 signature
//	    (a compact JWS) by one of those keys covers the SHA-256 of every line before it
//
// Prints one JSON object; exit 0 when everything verifies, 1 when something does not, 2 on bad usage or input.
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type result map[string]any

// vkeyList is a repeatable --vkey: every key of the log (a rotated log signed with several).
type vkeyList []string

func (v *vkeyList) String() string     { return strings.Join(*v, ",") }
func (v *vkeyList) Set(s string) error { *v = append(*v, s); return nil }

func finish(r result, ok bool) {
	r["verified"] = ok
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
	if ok {
		os.Exit(0)
	}
	os.Exit(1)
}

func fail(format string, args ...any) {
	out, _ := json.Marshal(result{"error": fmt.Sprintf(format, args...)})
	fmt.Println(string(out))
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: tlog-verifier tree|inclusion|consistency|cosigned ...")
	}
	flags := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	checkpointFile := flags.String("checkpoint", "", "a signed checkpoint note, or a checkpoints.ndjson")
	var vkeys vkeyList
	flags.Var(&vkeys, "vkey", "the log's verifier key (repeat it for every key of a rotated log)")
	exportFile := flags.String("export", "", "an audit export as `annals audit export` writes it")
	logFile := flags.String("log", "", "the log as `annals log export` writes it")
	proofFile := flags.String("proof", "", "a proof as `annals audit proof ... --json` prints it")
	witness := flags.String("witness", "", "a witness's verifier key (Ed25519)")
	cosignature := flags.String("cosignature", "", "the witness's cosignature line, when not in the note")
	flags.Parse(os.Args[2:])
	if len(vkeys) == 0 {
		fail("--vkey is required")
	}
	var verifiers []note.Verifier
	for _, vkey := range vkeys {
		v, err := note.NewVerifier(vkey)
		if err != nil {
			fail("bad --vkey: %v", err)
		}
		verifiers = append(verifiers, v)
	}
	verifier := verifiers[0]
	switch os.Args[1] {
	case "tree":
		tree(readCheckpoint(*checkpointFile), verifier, *logFile)
	case "inclusion":
		inclusion(*proofFile, verifier)
	case "consistency":
		consistency(*proofFile, verifier)
	case "cosigned":
		cosigned(readCheckpoint(*checkpointFile), verifier, *witness, *cosignature)
	case "export":
		export(*exportFile, verifiers)
	default:
		fail("unknown command %q", os.Args[1])
	}
}

// publishedAt is when the checkpoint read last was published (its line in a checkpoints.ndjson), if known.
var publishedAt time.Time

// readCheckpoint: the note text of a file holding a note, or the last checkpoint of a checkpoints.ndjson.
func readCheckpoint(file string) []byte {
	data, err := os.ReadFile(file)
	if err != nil {
		fail("reading the checkpoint: %v", err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return data
	}
	var last string
	for _, line := range bytes.Split(data, []byte("\n")) {
		var entry struct {
			Kind     string `json:"kind"`
			Note     string `json:"note"`
			SignedAt string `json:"signedAt"`
		}
		if json.Unmarshal(line, &entry) == nil && entry.Kind == "checkpoint" {
			last = entry.Note
			publishedAt, _ = time.Parse(time.RFC3339Nano, entry.SignedAt)
		}
	}
	if last == "" {
		fail("%s holds no checkpoint", file)
	}
	return []byte(last)
}

// backdatingTolerance: how long before a checkpoint was published an event after it may say it occurred.
const backdatingTolerance = time.Minute

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
}

// openCheckpoint verifies the note's signature with the log's key and parses its tlog-checkpoint body.
func openCheckpoint(text []byte, verifier note.Verifier, extra ...note.Verifier) (*checkpoint, *note.Note, error) {
	n, err := note.Open(text, note.VerifierList(append([]note.Verifier{verifier}, extra...)...))
	if err != nil {
		return nil, nil, fmt.Errorf("the checkpoint's signature does not verify: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) < 3 {
		return nil, nil, fmt.Errorf("not a checkpoint")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 {
		return nil, nil, fmt.Errorf("bad size line %q", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return nil, nil, fmt.Errorf("bad root hash line %q", lines[2])
	}
	c := &checkpoint{origin: lines[0], size: size}
	copy(c.root[:], root)
	return c, n, nil
}

// hashStore is an in-memory tlog.HashReader: the stored hashes of every record appended.
type hashStore []tlog.Hash

func (s *hashStore) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, index := range indexes {
		if index >= int64(len(*s)) {
			return nil, fmt.Errorf("no hash %d", index)
		}
		out[i] = (*s)[index]
	}
	return out, nil
}

func tree(text []byte, verifier note.Verifier, logFile string) {
	r := result{}
	c, _, err := openCheckpoint(text, verifier)
	if err != nil {
		r["detail"] = err.Error()
		finish(r, false)
	}
	r["origin"], r["size"], r["checkpointRoot"] = c.origin, c.size, base64.StdEncoding.EncodeToString(c.root[:])
	f, err := os.Open(logFile)
	if err != nil {
		fail("reading the log: %v", err)
	}
	defer f.Close()
	reader := bufio.NewReaderSize(f, 1<<20)
	store := &hashStore{}
	var n int64
	for {
		line, err := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			decoder := json.NewDecoder(bytes.NewReader(line))
			decoder.UseNumber()
			var event map[string]any
			if err := decoder.Decode(&event); err != nil {
				fail("log line %d: %v", n+1, err)
			}
			var raw struct {
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(line, &raw); err != nil {
				fail("log line %d: %v", n+1, err)
			}
			if event["kind"] == "event" {
				if metadata, ok := event["metadata"].(map[string]any); ok && n >= c.size && !publishedAt.IsZero() {
					occurred, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(metadata["occurredAt"]))
					if occurred.Before(publishedAt.Add(-backdatingTolerance)) {
						r["logEvents"] = n
						r["detail"] = fmt.Sprintf("event %v after the checkpoint says it occurred at %v, before the checkpoint was published (%v): backdated", event["id"], metadata["occurredAt"], publishedAt.Format(time.RFC3339))
						finish(r, false)
					}
				}
				leaf, err := leafBytes(event, raw.Data)
				if err != nil {
					fail("event %v: %v", event["id"], err)
				}
				hashes, err := tlog.StoredHashes(n, leaf, store)
				if err != nil {
					fail("%v", err)
				}
				*store = append(*store, hashes...)
				n++
			}
		}
		if err == io.EOF {
			break
		} else if err != nil {
			fail("reading the log: %v", err)
		}
	}
	r["logEvents"] = n
	if n < c.size {
		r["detail"] = fmt.Sprintf("the log holds %d events, the checkpoint covers %d", n, c.size)
		finish(r, false)
	}
	root, err := tlog.TreeHash(c.size, store)
	if err != nil {
		fail("%v", err)
	}
	r["logRoot"] = base64.StdEncoding.EncodeToString(root[:])
	if root != c.root {
		r["detail"] = "the log's first events do not hash to the checkpoint's root"
		finish(r, false)
	}
	finish(r, true)
}

// leafBytes: what annals hashes for an event (src/audit/log-leaf.ts), computed here from the event's fields: the
// metadata in canonical JSON, the data as the line carries it (the text JSON.stringify wrote, taken byte for byte).
func leafBytes(event map[string]any, rawData json.RawMessage) ([]byte, error) {
	streamID, _ := event["streamId"].(string)
	revision, _ := event["revision"].(string)
	id, _ := event["id"].(string)
	typ, _ := event["type"].(string)
	metadata, ok := event["metadata"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no metadata")
	}
	var b bytes.Buffer
	b.WriteString("annals-log-leaf/v1\n")
	writeString(&b, streamID)
	b.WriteString("\n" + revision + "\n")
	writeString(&b, id)
	b.WriteString("\n")
	writeString(&b, typ)
	b.WriteString("\n")
	if err := writeCanonical(&b, metadata); err != nil {
		return nil, err
	}
	b.WriteString("\n")
	if len(rawData) == 0 {
		b.WriteString("null")
	} else {
		b.Write(rawData)
	}
	return b.Bytes(), nil
}

// writeCanonical writes RFC 8785-style canonical JSON as JavaScript's JSON.stringify writes values: object keys
// sorted by UTF-16 code units, no whitespace, numbers in ECMAScript's shortest form.
func writeCanonical(b *bytes.Buffer, value any) error {
	switch v := value.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeString(b, v)
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return err
		}
		b.WriteString(esNumber(f))
	case []any:
		b.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, item); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("unexpected JSON value %T", value)
	}
	return nil
}

func lessUTF16(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// writeString escapes as JSON.stringify does: quote, backslash, the named control characters, other control
// characters as \u00xx; everything else as it is.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	b.WriteByte('"')
}

// esNumber formats a number as ECMAScript's Number::toString does (what JSON.stringify writes).
func esNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// The shortest digits that round-trip, and the decimal exponent: f = 0.d1d2...dk × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, exponent, _ := strings.Cut(e, "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	exp, _ := strconv.Atoi(exponent)
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	expText := strconv.Itoa(n - 1)
	if n-1 >= 0 {
		expText = "+" + expText
	}
	if k == 1 {
		return sign + digits + "e" + expText
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + expText
}

type proofCheckpoint struct {
	Size     int64  `json:"size"`
	RootHash string `json:"rootHash"`
	Note     string `json:"note"`
}

func readProof(file string, into any) {
	data, err := os.ReadFile(file)
	if err != nil {
		fail("reading the proof: %v", err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		fail("the proof is not JSON: %v", err)
	}
}

func hashes(list []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(list))
	for i, text := range list {
		raw, err := base64.StdEncoding.DecodeString(text)
		if err != nil || len(raw) != tlog.HashSize {
			return nil, fmt.Errorf("bad hash %q", text)
		}
		copy(out[i][:], raw)
	}
	return out, nil
}

func inclusion(file string, verifier note.Verifier) {
	var p struct {
		LeafIndex  int64           `json:"leafIndex"`
		TreeSize   int64           `json:"treeSize"`
		Proof      []string        `json:"proof"`
		LeafHash   string          `json:"leafHash"`
		Leaf       string          `json:"leaf"`
		Checkpoint proofCheckpoint `json:"checkpoint"`
	}
	readProof(file, &p)
	r := result{"leafIndex": p.LeafIndex, "treeSize": p.TreeSize}
	c, _, err := openCheckpoint([]byte(p.Checkpoint.Note), verifier)
	if err != nil {
		r["detail"] = err.Error()
		finish(r, false)
	}
	if c.size != p.TreeSize {
		r["detail"] = "the proof is for another tree size than its checkpoint's"
		finish(r, false)
	}
	// The leaf hash is recomputed from the leaf bytes, never taken from the proof.
	leaf := tlog.RecordHash([]byte(p.Leaf))
	if base64.StdEncoding.EncodeToString(leaf[:]) != p.LeafHash {
		r["detail"] = "the leaf bytes do not hash to the leaf hash given"
		finish(r, false)
	}
	proof, err := hashes(p.Proof)
	if err != nil {
		fail("%v", err)
	}
	if err := tlog.CheckRecord(proof, c.size, c.root, p.LeafIndex, leaf); err != nil {
		r["detail"] = err.Error()
		finish(r, false)
	}
	finish(r, true)
}

func consistency(file string, verifier note.Verifier) {
	var p struct {
		FromSize int64            `json:"fromSize"`
		ToSize   int64            `json:"toSize"`
		Proof    []string         `json:"proof"`
		From     *proofCheckpoint `json:"from"`
		To       proofCheckpoint  `json:"to"`
	}
	readProof(file, &p)
	r := result{"fromSize": p.FromSize, "toSize": p.ToSize}
	if p.From == nil {
		fail("the proof carries no checkpoint of its first size")
	}
	from, _, err := openCheckpoint([]byte(p.From.Note), verifier)
	if err != nil {
		r["detail"] = "first checkpoint: " + err.Error()
		finish(r, false)
	}
	to, _, err := openCheckpoint([]byte(p.To.Note), verifier)
	if err != nil {
		r["detail"] = "second checkpoint: " + err.Error()
		finish(r, false)
	}
	proof, err := hashes(p.Proof)
	if err != nil {
		fail("%v", err)
	}
	if err := tlog.CheckTree(proof, to.size, to.root, from.size, from.root); err != nil {
		r["detail"] = err.Error()
		finish(r, false)
	}
	finish(r, true)
}

// cosignatureV1 is a note.Verifier for a witness's timestamped cosignature (https://c2sp.org/tlog-cosignature):
// the signature is an 8-byte time and an Ed25519 signature over "cosignature/v1\ntime <t>\n" and the note's body.
type cosignatureV1 struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (c *cosignatureV1) Name() string    { return c.name }
func (c *cosignatureV1) KeyHash() uint32 { return c.hash }
func (c *cosignatureV1) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	return ed25519.Verify(c.key, []byte(fmt.Sprintf("cosignature/v1\ntime %d\n%s", t, msg)), sig[8:])
}

func witnessVerifier(vkey string) (*cosignatureV1, error) {
	name, rest, _ := strings.Cut(vkey, "+")
	_, key64, _ := strings.Cut(rest, "+")
	key, err := base64.StdEncoding.DecodeString(key64)
	if err != nil || len(key) != 33 || (key[0] != 0x01 && key[0] != 0x04) {
		return nil, fmt.Errorf("not an Ed25519 witness key")
	}
	h := sha256.Sum256(append([]byte(name+"\n\x04"), key[1:]...))
	return &cosignatureV1{name: name, hash: binary.BigEndian.Uint32(h[:4]), key: ed25519.PublicKey(key[1:])}, nil
}

func cosigned(text []byte, verifier note.Verifier, witnessKey, line string) {
	r := result{}
	if witnessKey == "" {
		fail("--witness is required")
	}
	w, err := witnessVerifier(witnessKey)
	if err != nil {
		fail("bad --witness: %v", err)
	}
	if line != "" {
		text = append(bytes.TrimRight(text, "\n"), []byte("\n"+strings.TrimRight(line, "\n")+"\n")...)
	}
	c, n, err := openCheckpoint(text, verifier, w)
	if err != nil {
		r["detail"] = err.Error()
		finish(r, false)
	}
	r["size"], r["origin"] = c.size, c.origin
	signers := []string{}
	for _, s := range n.Sigs {
		signers = append(signers, s.Name)
	}
	r["signers"] = signers
	byLog, byWitness := false, false
	for _, s := range n.Sigs {
		if s.Name == verifier.Name() && s.Hash == verifier.KeyHash() {
			byLog = true
		}
		if s.Name == w.name && s.Hash == w.hash {
			byWitness = true
		}
	}
	if !byLog || !byWitness {
		r["detail"] = "the checkpoint is not signed by both the log and the witness"
		finish(r, false)
	}
	finish(r, true)
}

// export checks an audit export (`annals audit export`, format version 2) against the log's keys: the checkpoint
// in its header, every event and actor line's inclusion in that checkpoint's tree, and the signature of its end line.
func export(file string, verifiers []note.Verifier) {
	r := result{}
	data, err := os.ReadFile(file)
	if err != nil {
		fail("reading the export: %v", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) < 2 {
		fail("%s is not an audit export", file)
	}
	bad := func(format string, args ...any) {
		r["detail"] = fmt.Sprintf(format, args...)
		finish(r, false)
	}
	var header struct {
		Kind    string `json:"kind"`
		Format  string `json:"format"`
		Version int    `json:"version"`
		Log     struct {
			Checkpoint *struct {
				Note string `json:"note"`
			} `json:"checkpoint"`
		} `json:"log"`
	}
	if err := json.Unmarshal(lines[0], &header); err != nil || header.Kind != "header" || header.Format != "annals-audit-export" || header.Version != 2 {
		fail("%s does not begin with an annals audit export header (version 2)", file)
	}
	if header.Log.Checkpoint == nil {
		bad("the export carries no checkpoint of the log")
	}
	c, _, err := openCheckpoint([]byte(header.Log.Checkpoint.Note), verifiers[0], verifiers[1:]...)
	if err != nil {
		bad("the export's checkpoint: %v", err)
	}
	r["origin"], r["treeSize"], r["rootHash"] = c.origin, c.size, base64.StdEncoding.EncodeToString(c.root[:])
	digest := sha256.New()
	events, actors, given := 0, 0, 0
	var end struct {
		Kind      string `json:"kind"`
		Digest    string `json:"digest"`
		Signature string `json:"signature"`
	}
	for i, line := range lines {
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(line, &kind); err != nil {
			bad("line %d is not JSON: %v", i+1, err)
		}
		if kind.Kind == "end" {
			if i != len(lines)-1 {
				bad("line %d: the end line is not the last", i+1)
			}
			json.Unmarshal(line, &end)
			break
		}
		digest.Write(line)
		digest.Write([]byte("\n"))
		if kind.Kind != "event" && kind.Kind != "actor" {
			continue
		}
		decoder := json.NewDecoder(bytes.NewReader(line))
		decoder.UseNumber()
		var event map[string]any
		if err := decoder.Decode(&event); err != nil {
			bad("line %d: %v", i+1, err)
		}
		var raw struct {
			Data     json.RawMessage `json:"data"`
			Redacted []string        `json:"redacted"`
			Proof    *struct {
				LeafIndex int64    `json:"leafIndex"`
				Hashes    []string `json:"hashes"`
				LeafHash  string   `json:"leafHash"`
			} `json:"proof"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			bad("line %d: %v", i+1, err)
		}
		if raw.Proof == nil {
			bad("line %d (event %v) carries no inclusion proof", i+1, event["id"])
		}
		var leaf tlog.Hash
		if len(raw.Redacted) > 0 {
			// A line with fields left out (a password hash): its leaf's hash is given, not recomputed.
			given++
			h, err := base64.StdEncoding.DecodeString(raw.Proof.LeafHash)
			if err != nil || len(h) != tlog.HashSize {
				bad("line %d (event %v) is redacted and its proof gives no leaf hash", i+1, event["id"])
			}
			copy(leaf[:], h)
		} else {
			bytes, err := leafBytes(event, raw.Data)
			if err != nil {
				bad("line %d (event %v): %v", i+1, event["id"], err)
			}
			leaf = tlog.RecordHash(bytes)
		}
		proof, err := hashes(raw.Proof.Hashes)
		if err != nil {
			bad("line %d: %v", i+1, err)
		}
		if err := tlog.CheckRecord(proof, c.size, c.root, raw.Proof.LeafIndex, leaf); err != nil {
			bad("line %d (event %v, leaf %d) is not in the checkpoint's tree: %v", i+1, event["id"], raw.Proof.LeafIndex, err)
		}
		if kind.Kind == "event" {
			events++
		} else {
			actors++
		}
	}
	r["events"], r["actorEvents"], r["leafHashesGiven"] = events, actors, given
	if end.Kind != "end" {
		bad("the export has no end line: it is cut short")
	}
	sum := "sha256:" + fmt.Sprintf("%x", digest.Sum(nil))
	r["digest"] = sum
	if end.Digest != sum {
		bad("the lines before the end line hash to %s, the end line names %s: a line was changed", sum, end.Digest)
	}
	parts := strings.Split(end.Signature, ".")
	if len(parts) != 3 {
		bad("the end line's signature is not a compact JWS")
	}
	signature, err := base64.RawURLEncoding.DecodeString(parts[2])
	payloadJSON, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || err2 != nil {
		bad("the end line's signature is not base64url")
	}
	signedBy := ""
	for _, v := range verifiers {
		// An audit key signs the JWS input with Ed25519, as it signs notes: the note verifier checks it.
		if v.Verify([]byte(parts[0]+"."+parts[1]), signature) {
			signedBy = v.Name() + "+" + fmt.Sprintf("%08x", v.KeyHash())
		}
	}
	if signedBy == "" {
		bad("the end line's signature verifies with none of the keys given")
	}
	var payload struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal(payloadJSON, &payload); err != nil || payload.Digest != sum {
		bad("the signature covers another digest than the bundle's lines")
	}
	r["signedBy"] = signedBy
	finish(r, true)
}
