package mm2conf

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kmmproject/kmm/mm2conf/clientconf"
)

// LoadOptions says what to read. Two forms exist (see the package comment
// for how they merge):
//
//	form 1 (MM2's own):  kmm replicate mm2.properties [--clusters B ...]
//	form 2 (tutorials):  kmm replicate --clusters SOURCE,TARGET \
//	                       --source-cluster-config s.properties \
//	                       --target-cluster-config t.properties \
//	                       --whitelist '.*' --config mm2.properties
type LoadOptions struct {
	// ConfigFile is the MM2 properties file (positional argument or --config).
	ConfigFile string
	// Clusters is --clusters. Elements may hold several aliases separated by
	// commas or whitespace. In form 1 it keeps only herders whose target is
	// listed (MM2 semantics). In form 2 its first two aliases also name the
	// source and target of the implied flow.
	Clusters []string
	// SourceClusterConfig and TargetClusterConfig are the form-2 cluster files.
	SourceClusterConfig string
	TargetClusterConfig string
	// Whitelist is MM1's --whitelist (nil when not given).
	Whitelist *string

	// FS reads every file (properties, provider files, key stores). nil: the OS.
	FS FileSystem
	// LookupEnv serves ${env:VAR}. nil: os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Config is a resolved MM2 configuration.
type Config struct {
	// Files lists the files read, in order.
	Files []string
	// Clusters are the aliases of `clusters`, deduplicated, in file order.
	Clusters []string
	// Targets is the --clusters selection (nil: every cluster).
	Targets []string
	// Flows are the herders MM2 would create after --clusters, in
	// `clusters` order: enabled flows and heartbeats-only ones.
	Flows []*FlowConfig
	// Diagnostics are all findings, sorted by file:line.
	Diagnostics Diagnostics

	raw       *rawSet
	b         *builder
	providers *providerSet
	fsys      FileSystem
}

// FlowConfig is the MM2 file's settings of one source->target pair (one MM2 herder), as MM2
// resolves them; pkg/flow.Flow is the validated flow built from it.
type FlowConfig struct {
	Source string
	Target string
	// HerderReason is why MM2 creates this herder: "enabled" (S->T.enabled
	// is true) or "heartbeats" (only because heartbeats are on for the pair).
	HerderReason string
	// Enabled: the MirrorSource and MirrorCheckpoint connectors run, i.e.
	// records are replicated. It is the connector's typed `enabled` value.
	Enabled bool
	// Connector is MM2's connector config for the pair, as built by
	// MirrorMakerConfig.connectorBaseConfig (MirrorSourceConnector variant).
	Connector Props
	// Worker is MM2's Connect worker config for the pair (the target side).
	Worker Props
	// Settings are the typed effective connector settings.
	Settings Settings
	// Effective lists every MM2 connector key (non-security) with its
	// effective value and origin, defaults included, sorted by key.
	Effective []Setting
	// Features says what runs.
	Features Features
	// Filters. Nil only when the configuration has errors.
	TopicFilter          *Filter
	GroupFilter          *Filter
	ConfigPropertyFilter *Filter

	cfg     *Config
	mu      sync.Mutex
	clients map[string]*ClientConfig
}

// Name is "S->T".
func (f *FlowConfig) Name() string { return f.Source + "->" + f.Target }

// Setting is one effective connector setting.
type Setting struct {
	Key   string
	Value Value
	// Type is the ConfigDef type (BOOLEAN, LIST, ...).
	Type string
}

// ClientConfig is one role's client configuration.
type ClientConfig struct {
	Role string
	// Java holds the Java client settings as MM2 would build them, with
	// origins (values may be ${...} expressions; see Value.Resolved).
	Java Props
	// Librdkafka is the translation (clientconf.Translate).
	Librdkafka clientconf.Result
}

// Err returns a *ConfigError when the configuration has errors.
func (c *Config) Err() error {
	if c.Diagnostics.HasErrors() {
		return &ConfigError{Diagnostics: c.Diagnostics}
	}
	return nil
}

// Flow returns the flow named "S->T", or nil.
func (c *Config) Flow(name string) *FlowConfig {
	for _, f := range c.Flows {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// EnabledFlows returns the flows that replicate records.
func (c *Config) EnabledFlows() []*FlowConfig {
	var out []*FlowConfig
	for _, f := range c.Flows {
		if f.Enabled {
			out = append(out, f)
		}
	}
	return out
}

// ClusterProps returns MM2's clusterProps(alias) with origins.
func (c *Config) ClusterProps(alias string) Props { return c.b.clusterProps(alias) }

// Entries returns the merged input entries (after the command-line forms
// were applied), sorted by key.
func (c *Config) Entries() []Entry {
	var out []Entry
	for _, e := range c.raw.all() {
		out = append(out, Entry{Key: e.Key, Value: e.Value, Pos: e.Pos})
	}
	return out
}

// Load reads and resolves the configuration. It always returns a Config
// (possibly partial) so that `kmm config check` can report; the error is a
// *ConfigError when any diagnostic is an error.
func Load(opts LoadOptions) (*Config, error) {
	c := &Config{raw: newRawSet(), fsys: opts.FS}
	if c.fsys == nil {
		c.fsys = OSFileSystem()
	}
	env := opts.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	sink := &diagSink{}
	c.b = &builder{raw: c.raw}
	if ok := c.readInputs(opts, sink); ok {
		c.resolve(opts, env, sink)
	}
	c.Diagnostics = sink.list.Sort()
	return c, c.Err()
}

// MaxFileSize is the largest properties file kmm reads. MM2 files are kilobytes; the limit
// keeps a wrong argument (/dev/zero, a log file, a JAR) from exhausting memory.
const MaxFileSize = 4 << 20

// readFile parses one properties file (ISO-8859-1, like MM2).
func (c *Config) readFile(name, what string, sink *diagSink) (*Properties, bool) {
	if st, err := c.fsys.Stat(name); err == nil {
		switch {
		case st.IsDir():
			sink.err("file", Pos{File: name}, "", fmt.Sprintf("%s %s is a directory", what, name), "give the path of the .properties file")
			return nil, false
		case !st.Mode().IsRegular():
			sink.err("file", Pos{File: name}, "", fmt.Sprintf("%s %s is not a regular file (a device, pipe or socket)", what, name), "give the path of the .properties file; kmm does not read configuration from pipes or devices")
			return nil, false
		case st.Size() > MaxFileSize:
			sink.err("file", Pos{File: name}, "", fmt.Sprintf("%s %s is %d bytes, over kmm's limit of %d (MM2 properties files are a few kilobytes)", what, name, st.Size(), MaxFileSize),
				"check that this is the MM2 properties file")
			return nil, false
		}
	}
	data, err := c.fsys.ReadFile(name)
	if err == nil && len(data) > MaxFileSize {
		sink.err("file", Pos{File: name}, "", fmt.Sprintf("%s %s is over kmm's limit of %d bytes (MM2 properties files are a few kilobytes)", what, name, MaxFileSize), "check that this is the MM2 properties file")
		return nil, false
	}
	if err == nil && len(bytes.TrimSpace(data)) == 0 {
		sink.err("file", Pos{File: name}, "", fmt.Sprintf("%s %s is empty", what, name), "write the MM2 settings into it, starting with `clusters = A, B`")
		return nil, false
	}
	if err == nil && bytes.IndexByte(data, 0) >= 0 {
		sink.err("file", Pos{File: name}, "", fmt.Sprintf("%s %s is not a text file (it holds NUL bytes)", what, name), "check that this is the MM2 properties file")
		return nil, false
	}
	if err != nil {
		msg := fmt.Sprintf("cannot read %s %s: %v", what, name, err)
		if errors.Is(err, fs.ErrNotExist) {
			msg = fmt.Sprintf("%s %s does not exist", what, name)
		}
		sink.err("file", Pos{File: name}, "", msg, "")
		return nil, false
	}
	c.Files = append(c.Files, name)
	p, diags, perr := ParseProperties(name, data, Latin1)
	for _, d := range diags {
		sink.add(d)
	}
	if perr != nil {
		var se *SyntaxError
		if errors.As(perr, &se) {
			sink.err("syntax", se.Pos, "", se.Msg+" (java.util.Properties rejects the file; MM2 fails to start)", `a backslash-u in a value must be followed by four hex digits; write \\u for a literal backslash-u`)
		} else {
			sink.err("syntax", Pos{File: name}, "", perr.Error(), "")
		}
		return nil, false
	}
	checkEncoding(name, data, p, sink)
	return p, true
}

// checkEncoding warns about a UTF-8 byte-order mark and about keys and values that hold UTF-8
// text: MM2 reads the file as ISO-8859-1, so each byte of a multi-byte character becomes a
// character of its own. Comments do not matter, and neither do bytes that are not UTF-8 (an
// ISO-8859-1 file is read as intended).
func checkEncoding(name string, data []byte, p *Properties, sink *diagSink) {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		sink.warn("encoding-bom", Pos{File: name, Line: 1}, "", "the file starts with a UTF-8 byte-order mark; MM2 reads properties files as ISO-8859-1, so the first key gets the prefix \"ï»¿\" and does not mean what it says", "save the file without a byte-order mark")
	}
	for _, e := range p.Effective() {
		if e.Pos.Line == 1 && strings.HasPrefix(e.Key, "ï»¿") {
			continue // the byte-order mark, reported above
		}
		for _, part := range []struct{ what, s string }{{"key", e.Key}, {"value", e.Value}} {
			written, ok := utf8Written(part.s)
			if !ok {
				continue
			}
			what := "the value of " + e.Key
			if part.what == "key" {
				what = "the key " + strconv.Quote(e.Key)
			} else if clientconf.IsSecretKey(e.Key) {
				// A secret is never shown, not even garbled.
				sink.warn("encoding-utf8", e.Pos, e.Key, "the value of "+e.Key+" holds non-ASCII characters written as UTF-8, but MM2 reads properties files as ISO-8859-1, so each of their bytes becomes a character of its own (kmm does the same)",
					`write non-ASCII characters as \uXXXX escapes`)
				continue
			}
			sink.warn("encoding-utf8", e.Pos, e.Key,
				fmt.Sprintf("%s was written as UTF-8 (%s), but MM2 reads properties files as ISO-8859-1, so it becomes %s (kmm does the same)", what, strconv.Quote(written), strconv.Quote(part.s)),
				"write non-ASCII characters as \\uXXXX escapes: "+javaEscape(written))
		}
	}
}

// utf8Written returns the text s was written as when its ISO-8859-1 characters are the bytes of
// UTF-8 text with at least one multi-byte character.
func utf8Written(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	multi := false
	for _, r := range s {
		if r > 0xFF {
			return "", false // a \uXXXX escape: meant as written
		}
		if r >= 0x80 {
			multi = true
		}
		b = append(b, byte(r))
	}
	if !multi || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// javaEscape writes the non-ASCII characters of s as Java \uXXXX escapes (UTF-16).
func javaEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

func splitAliases(list []string) []string {
	var out []string
	for _, s := range list {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			out = append(out, f)
		}
	}
	return out
}

// readInputs builds the merged raw set from the files and command-line forms.
func (c *Config) readInputs(opts LoadOptions, sink *diagSink) bool {
	ok := true
	if opts.ConfigFile != "" {
		p, fine := c.readFile(opts.ConfigFile, "MM2 configuration file", sink)
		if !fine {
			return false
		}
		for _, e := range p.Effective() {
			c.raw.set(rawEntry{Key: e.Key, Value: e.Value, Pos: e.Pos, LostEscape: e.LostEscape})
		}
	}
	targets := splitAliases(opts.Clusters)
	form2 := opts.SourceClusterConfig != "" || opts.TargetClusterConfig != ""
	if !form2 {
		if opts.ConfigFile == "" {
			sink.err("usage", Pos{}, "", "no MM2 configuration file given", "pass the mm2.properties file as the first argument")
			return false
		}
		if opts.Whitelist != nil {
			c.applyWhitelist(*opts.Whitelist, "topics", sink)
		}
		if len(opts.Clusters) > 0 {
			c.Targets = targets
		}
		return ok
	}
	// Form 2: aliases come from --clusters, else from the file's two clusters.
	var src, tgt string
	switch {
	case len(targets) == 2:
		src, tgt = targets[0], targets[1]
	case len(targets) == 0:
		if e, has := c.raw.get("clusters"); has {
			if l := ParseList(e.Value); len(l) == 2 {
				src, tgt = l[0], l[1]
			}
		}
	}
	if src == "" || tgt == "" || src == tgt {
		sink.err("usage", Pos{}, "", "--source-cluster-config/--target-cluster-config need two different cluster aliases: pass --clusters SOURCE,TARGET", "")
		return false
	}
	if len(targets) > 0 {
		c.Targets = targets
	}
	for _, side := range []struct{ file, flag, alias string }{
		{opts.SourceClusterConfig, "--source-cluster-config", src},
		{opts.TargetClusterConfig, "--target-cluster-config", tgt},
	} {
		if side.file == "" {
			continue
		}
		p, fine := c.readFile(side.file, side.flag+" file", sink)
		if !fine {
			ok = false
			continue
		}
		var overridden []string
		first := Pos{}
		for _, e := range p.Effective() {
			key := side.alias + "." + e.Key
			if prev, dup := c.raw.get(key); dup && prev.Value != e.Value {
				overridden = append(overridden, fmt.Sprintf("%s (line %d)", key, prev.Pos.Line))
				if first.IsZero() || e.Pos.Less(first) {
					first = e.Pos
				}
			}
			c.raw.set(rawEntry{Key: key, Value: e.Value, Pos: e.Pos, Note: "from " + side.flag + " as " + key, LostEscape: e.LostEscape})
		}
		if len(overridden) > 0 {
			sink.warn("form2-override", first, "", fmt.Sprintf("%s (%s) replaces %d setting(s) that %s gives other values: %s", side.file, side.flag, len(overridden), opts.ConfigFile, strings.Join(overridden, ", ")),
				"keep each cluster's settings in one place")
		}
	}
	// clusters
	if e, has := c.raw.get("clusters"); !has {
		c.raw.set(rawEntry{Key: "clusters", Value: src + ", " + tgt, Note: "implied by --clusters " + src + "," + tgt})
	} else {
		l := ParseList(e.Value)
		var missing []string
		for _, a := range []string{src, tgt} {
			if !contains(l, a) {
				missing = append(missing, a)
			}
		}
		if len(missing) > 0 {
			nv := strings.Join(append(l, missing...), ", ")
			sink.warn("form2-clusters", e.Pos, "clusters", fmt.Sprintf("clusters does not list %s, named by --clusters; kmm adds it", strings.Join(missing, ", ")), "write: clusters = "+nv)
			c.raw.set(rawEntry{Key: "clusters", Value: nv, Pos: e.Pos, Note: "extended by --clusters"})
		}
	}
	// The implied flow.
	flowKey := src + "->" + tgt + ".enabled"
	file := opts.ConfigFile
	if file == "" {
		file = "mm2.properties"
	}
	if e, has := c.raw.get(flowKey); has {
		if !JavaParseBoolean(e.Value) {
			sink.warn("form2-flow", e.Pos, flowKey, fmt.Sprintf("the command line implies the flow %s->%s, but %s sets %s = %s; kmm follows the file", src, tgt, file, flowKey, e.Value), "")
		}
	} else {
		sink.warn("form2-flow", Pos{}, flowKey, fmt.Sprintf("MM2 has no --source-cluster-config/--target-cluster-config flags: kmm treats them as enabling the flow %s->%s, which MM2 would not run", src, tgt),
			fmt.Sprintf("add this line to %s: %s = true", file, flowKey))
		c.raw.set(rawEntry{Key: flowKey, Value: "true", Note: "implied by --source-cluster-config/--target-cluster-config"})
	}
	if opts.Whitelist != nil {
		c.applyWhitelist(*opts.Whitelist, src+"->"+tgt+".topics", sink)
	}
	return ok
}

func (c *Config) applyWhitelist(v, key string, sink *diagSink) {
	msg := fmt.Sprintf("--whitelist is a MirrorMaker 1 flag; MM2 has no such option: kmm uses it as %s = %s", key, v)
	if prev, has := c.raw.get(key); has {
		msg += fmt.Sprintf(", replacing the value at %s", prev.Pos)
	}
	sink.warn("mm1-whitelist", Pos{}, key, msg, fmt.Sprintf("write %s = %s in the MM2 file instead", key, v))
	c.raw.set(rawEntry{Key: key, Value: v, Note: "from --whitelist"})
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// resolve runs MM2's rules over the merged raw set.
func (c *Config) resolve(opts LoadOptions, env func(string) (string, bool), sink *diagSink) {
	ce, ok := c.raw.get("clusters")
	if ok {
		// MirrorMakerConfig resolves config providers in its own originals
		// (AbstractConfig), so `clusters` and the herder keys may use them.
		c.providers = newProviderSet(c.raw, c.fsys, env, sink)
		ce.Value = c.resolveRaw(ce, sink)
	}
	if !ok {
		pos, hint := Pos{File: opts.ConfigFile}, "list the cluster aliases, e.g. clusters = A, B"
		for _, e := range c.raw.all() {
			if strings.HasSuffix(e.Key, "clusters") && !strings.Contains(e.Key, ".") || strings.EqualFold(e.Key, "clusters") {
				pos = e.Pos
				hint = fmt.Sprintf("this line sets %q, not \"clusters\"", e.Key)
				if strings.HasPrefix(e.Key, "ï»¿") {
					hint += ": the file starts with a UTF-8 byte-order mark, which Java reads as part of the first key"
				}
				break
			}
		}
		sink.err("no-clusters", pos, "clusters", `Missing required configuration "clusters" which has no default value.`, hint)
		return
	}
	seen := map[string]bool{}
	for _, a := range ParseList(ce.Value) {
		if a == "" {
			sink.err("empty-alias", ce.Pos, "clusters", "clusters has an empty alias (a stray comma)", "clusters = "+strings.Join(nonEmpty(ParseList(ce.Value)), ", "))
			continue
		}
		if seen[a] {
			sink.warn("duplicate-alias", ce.Pos, "clusters", fmt.Sprintf("alias %q is listed twice", a), "")
			continue
		}
		seen[a] = true
		c.Clusters = append(c.Clusters, a)
	}
	for _, t := range c.Targets {
		if !seen[t] {
			sink.err("unknown-target", Pos{}, "", fmt.Sprintf("--clusters names %q, which is not in clusters (%s)", t, strings.Join(c.Clusters, ", ")), "")
		}
	}
	checkKeys(c, sink)

	// Herders (MirrorMakerConfig.clusterPairs + the --clusters filter).
	globalHB := true
	if e, ok := c.raw.get("emit.heartbeats.enabled"); ok {
		globalHB = JavaParseBoolean(c.resolveRaw(e, sink))
	}
	targetOK := func(t string) bool { return len(c.Targets) == 0 || contains(c.Targets, t) }
	anyEnabled := false
	for _, s := range c.Clusters {
		for _, t := range c.Clusters {
			if s == t {
				continue
			}
			prefix := s + "->" + t + "."
			en, hasEn := c.raw.get(prefix + "enabled")
			en.Value = c.resolveRaw(en, sink)
			pairEnabled := hasEn && JavaParseBoolean(en.Value)
			hb := globalHB
			if e, ok := c.raw.get(prefix + "emit.heartbeats.enabled"); ok {
				hb = JavaParseBoolean(c.resolveRaw(e, sink))
			}
			if hasEn && !pairEnabled {
				if b, err := ParseBool(en.Value); err == nil && b {
					if hb {
						sink.warn("enabled-whitespace", en.Pos, en.Key, fmt.Sprintf("%s = %q has whitespace around 'true': MM2's herder check reads it as false, but the flow still runs because heartbeats create the herder and the connector trims the value", en.Key, en.Value), "write exactly: "+en.Key+" = true")
					} else {
						sink.warn("enabled-whitespace", en.Pos, en.Key, fmt.Sprintf("%s = %q has whitespace around 'true': MM2 reads it with Boolean.parseBoolean, untrimmed, as false, and with heartbeats off no herder exists: the flow does not run", en.Key, en.Value), "write exactly: "+en.Key+" = true")
					}
				}
			}
			if !pairEnabled && !hb {
				continue
			}
			if !targetOK(t) {
				continue
			}
			f := &FlowConfig{Source: s, Target: t, cfg: c, clients: map[string]*ClientConfig{}}
			f.HerderReason = "heartbeats"
			if pairEnabled {
				f.HerderReason = "enabled"
			}
			c.Flows = append(c.Flows, f)
		}
	}
	for _, f := range c.Flows {
		c.buildFlow(f, sink)
		if f.Enabled {
			anyEnabled = true
		}
	}
	if len(c.Flows) == 0 {
		sink.err("no-flows", ce.Pos, "", "No source->target replication flows. (MM2 refuses to start)", noFlowHint(c))
	} else if !anyEnabled {
		sink.err("no-enabled-flow", ce.Pos, "", "no flow is enabled: MM2 enables none by default, so nothing would be replicated (only heartbeats)", noFlowHint(c))
	}
	c.checkClusters(sink)
	c.checkNaming(sink)
	c.checkLoops(sink)
	used := map[string]bool{}
	for _, e := range c.raw.all() {
		for _, n := range providerNames(e.Value) {
			used[n] = true
		}
	}
	c.providers.checkDeclared(used)
}

func noFlowHint(c *Config) string {
	if len(c.Clusters) >= 2 {
		return fmt.Sprintf("enable a flow, e.g. %s->%s.enabled = true", c.Clusters[0], c.Clusters[1])
	}
	return "list at least two clusters and enable a flow, e.g. clusters = A, B and A->B.enabled = true"
}

func nonEmpty(l []string) []string {
	var out []string
	for _, s := range l {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// checkClusters: every cluster a herder uses needs bootstrap.servers.
func (c *Config) checkClusters(sink *diagSink) {
	used := map[string]bool{}
	for _, f := range c.Flows {
		used[f.Target] = true
		if f.Enabled {
			used[f.Source] = true
		}
	}
	ce, _ := c.raw.get("clusters")
	for _, a := range c.Clusters {
		cp := c.b.clusterProps(a)
		if _, ok := cp["bootstrap.servers"]; ok {
			continue
		}
		if used[a] {
			sink.err("no-bootstrap", ce.Pos, a+".bootstrap.servers", fmt.Sprintf("cluster %q has no bootstrap.servers (MM2 would connect its worker to localhost:9092)", a), fmt.Sprintf("add %s.bootstrap.servers = host1:9092,host2:9092", a))
		} else {
			sink.warn("no-bootstrap", ce.Pos, a+".bootstrap.servers", fmt.Sprintf("cluster %q has no bootstrap.servers (no flow uses it)", a), "")
		}
	}
}

// resolveRaw resolves config providers in a raw value used by MM2's own
// config (clusters, the herder keys), reporting what cannot be resolved.
func (c *Config) resolveRaw(e rawEntry, sink *diagSink) string {
	out, _, probs := c.providers.resolve(e.Value)
	for _, pr := range probs {
		if !pr.warn {
			sink.err("provider", e.Pos, e.Key, pr.msg, pr.hint)
		}
	}
	return out
}

// resolveProps runs config providers over a map, reporting problems at the
// origin of each value.
func (c *Config) resolveProps(p Props, sink *diagSink) {
	for _, k := range p.Keys() {
		v := p[k]
		if !strings.Contains(v.Raw, "${") {
			continue
		}
		out, changed, probs := c.providers.resolve(v.Raw)
		for _, pr := range probs {
			if pr.warn {
				sink.warn("provider", v.Origin.Pos, v.Origin.Key, pr.msg, pr.hint)
			} else {
				sink.err("provider", v.Origin.Pos, v.Origin.Key, pr.msg, pr.hint)
			}
		}
		for _, pr := range probs {
			if !pr.warn {
				v.Unresolved = true
			}
		}
		if changed {
			v.resolved, v.hasResolved, v.FromProvider = out, true, true
		}
		p[k] = v
	}
}

// ClientConfig returns the client configuration of a role (see Roles),
// translated to librdkafka by clientconf. Unknown roles return nil.
func (f *FlowConfig) ClientConfig(role string) *ClientConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cc, ok := f.clients[role]; ok {
		return cc
	}
	java := javaClientProps(role, f.Connector, f.Worker, f.Settings.OffsetSyncsTopicLocation)
	if java == nil {
		return nil
	}
	cc := &ClientConfig{Role: role, Java: java}
	props := map[string]clientconf.Prop{}
	for k, v := range java {
		pos := v.Origin.Pos.String()
		if v.Origin.IsDefault() || pos == "" {
			pos = "default"
		}
		props[k] = clientconf.Prop{Value: v.Resolved(), Pos: pos}
	}
	crole := clientconf.Consumer
	switch role {
	case RoleTargetProducer, RoleSourceProducer, RoleOffsetSyncsProducer:
		crole = clientconf.Producer
	case RoleSourceAdmin, RoleTargetAdmin:
		crole = clientconf.Admin
	}
	cc.Librdkafka = clientconf.Translate(props, crole, clientconf.Options{ReadFile: f.cfg.fsys.ReadFile})
	if role == RoleSourceConsumer && cc.Librdkafka.Origin["isolation.level"] == clientconf.OriginJavaDefault {
		// kmm differs from MM2 on purpose: records of aborted source transactions are never
		// copied (MM2's consumer reads uncommitted unless told otherwise). The file's
		// <S>.consumer.isolation.level = read_uncommitted restores MM2's behaviour.
		cc.Librdkafka.Config["isolation.level"] = "read_committed"
		cc.Librdkafka.Origin["isolation.level"] = OriginReadCommitted
	}
	f.clients[role] = cc
	return cc
}

// OriginReadCommitted is the origin of the source consumer's isolation.level when the file does
// not set it.
const OriginReadCommitted = "kmm default (MM2's: read_uncommitted): records of aborted source transactions are never copied"

// usedRoles are the roles a flow's running connectors use.
func (f *FlowConfig) usedRoles() []string {
	if !f.Enabled {
		return []string{RoleTargetProducer, RoleTargetAdmin}
	}
	roles := []string{RoleSourceConsumer, RoleTargetProducer, RoleSourceAdmin, RoleTargetAdmin}
	if f.Features.OffsetSyncs || f.Features.Checkpoints {
		roles = append(roles, RoleOffsetSyncsProducer)
		if f.Settings.OffsetSyncsTopicLocation == "target" {
			roles = append(roles, RoleTargetConsumer)
		}
	}
	return roles
}

// clientDiags translates the used roles and converts clientconf findings.
func (c *Config) clientDiags(f *FlowConfig, sink *diagSink) {
	for _, role := range f.usedRoles() {
		cc := f.ClientConfig(role)
		for _, d := range cc.Librdkafka.Diags {
			if v, ok := cc.Java[d.Key]; ok && v.Unresolved {
				continue // the provider error was reported already
			}
			if d.Pos == "" && (d.Key == "bootstrap.servers" || strings.HasPrefix(d.Msg, "bootstrap.servers is not set")) {
				continue // checkClusters reports it with the cluster's name
			}
			pos, key := parseDiagPos(d.Pos), d.Key
			// Map the Java key back to the property key as written.
			if v, ok := cc.Java[d.Key]; ok && v.Origin.Key != "" {
				key = v.Origin.Key
			}
			nd := Diagnostic{Severity: SeverityWarning, Code: "client", Pos: pos, Key: key, Msg: d.Msg, Hint: d.Hint}
			if key != "" && !strings.Contains(d.Msg, key) {
				nd.Msg = key + ": " + d.Msg
			}
			if d.Severity == clientconf.Error {
				nd.Severity = SeverityError
				if !pos.IsZero() && sink.hasErrorAt(pos, key) {
					continue // the connector check reported this line's value already
				}
			}
			sink.add(nd)
		}
	}
}

func parseDiagPos(s string) Pos {
	if s == "" || s == "default" {
		return Pos{}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Pos{File: s}
	}
	n := 0
	for _, r := range s[i+1:] {
		if r < '0' || r > '9' {
			return Pos{File: s}
		}
		n = n*10 + int(r-'0')
	}
	return Pos{File: s[:i], Line: n}
}
