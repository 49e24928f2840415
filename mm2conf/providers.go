package mm2conf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// FileSystem is the file access mm2conf needs: the properties files and
// what FileConfigProvider/DirectoryConfigProvider read. Paths are used as
// given (relative paths are relative to the process's working directory, as
// for MM2).
type FileSystem interface {
	ReadFile(name string) ([]byte, error)
	Stat(name string) (fs.FileInfo, error)
}

type osFS struct{}

func (osFS) ReadFile(name string) ([]byte, error)  { return os.ReadFile(name) }
func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// OSFileSystem returns the real file system.
func OSFileSystem() FileSystem { return osFS{} }

// The ConfigProvider classes kmm implements.
const (
	FileConfigProviderClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	EnvVarConfigProviderClass    = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	DirectoryConfigProviderClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
)

// variablePattern is ConfigTransformer.DEFAULT_PATTERN,
// \$\{([^}]*?):(([^}]*?):)?([^}]*?)\}. Go's regexp picks the same submatches
// as Java here (leftmost-first, lazy quantifiers honoured).
var variablePattern = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// HasVariables reports whether v contains a ${provider:[path:]key} reference.
func HasVariables(v string) bool { return variablePattern.MatchString(v) }

type providerSpec struct {
	name     string
	class    string
	classPos Pos
	params   map[string]string
	err      string // configure() failure, reported at each use
	allowed  []string
	envAllow func(string) bool
}

// providerSet resolves ${...} references like Kafka's ConfigTransformer
// with the configured providers, except that kmm reports every reference it
// cannot resolve as an error (Kafka leaves it in place, so the literal text
// "${file:...}" would be used as, say, a password).
type providerSet struct {
	fsys     FileSystem
	env      func(string) (string, bool)
	declared map[string]*providerSpec
	listPos  Pos
	names    []string
	files    map[string]map[string]string // FileConfigProvider cache
	fileErr  map[string]string
	sink     *diagSink
}

func newProviderSet(raw *rawSet, fsys FileSystem, env func(string) (string, bool), sink *diagSink) *providerSet {
	ps := &providerSet{fsys: fsys, env: env, declared: map[string]*providerSpec{},
		files: map[string]map[string]string{}, fileErr: map[string]string{}, sink: sink}
	e, ok := raw.get("config.providers")
	if !ok {
		return ps
	}
	ps.listPos = e.Pos
	for _, name := range ParseList(e.Value) {
		if name == "" {
			continue
		}
		ps.names = append(ps.names, name)
		spec := &providerSpec{name: name, params: map[string]string{}}
		ps.declared[name] = spec
		prefix := "config.providers." + name
		if c, ok := raw.get(prefix + ".class"); ok {
			spec.class = c.Value
			spec.classPos = c.Pos
			if t := javaTrim(c.Value); t != c.Value {
				sink.warn("provider-class-whitespace", c.Pos, c.Key, "the class name has leading or trailing whitespace, so the JVM cannot load it and MM2 fails to start", "remove the whitespace")
				spec.class = t
			}
		}
		for _, pe := range raw.withPrefix(prefix + ".param.") {
			spec.params[strings.TrimPrefix(pe.Key, prefix+".param.")] = pe.Value
		}
		ps.configure(spec)
	}
	return ps
}

// configure mirrors each provider's configure(): allowed.paths must be
// absolute existing paths; allowlist.pattern must compile.
func (ps *providerSet) configure(spec *providerSpec) {
	switch spec.class {
	case FileConfigProviderClass, DirectoryConfigProviderClass:
		v, ok := spec.params["allowed.paths"]
		if !ok || v == "" {
			return
		}
		for _, p := range strings.Split(v, ",") {
			n := filepath.Clean(p)
			if !filepath.IsAbs(n) {
				spec.err = fmt.Sprintf("allowed.paths: path %s is not absolute", n)
				return
			}
			if _, err := ps.fsys.Stat(n); err != nil {
				spec.err = fmt.Sprintf("allowed.paths: path %s does not exist", n)
				return
			}
			spec.allowed = append(spec.allowed, n)
		}
	case EnvVarConfigProviderClass:
		v, ok := spec.params["allowlist.pattern"]
		if !ok {
			return
		}
		re, err := compileJavaRegex(v)
		if err != nil {
			spec.err = "allowlist.pattern: " + err.Error()
			return
		}
		spec.envAllow = func(s string) bool { ok, err := re.MatchString(s); return ok && err == nil }
	}
}

// pathAllowed is AllowedPaths.parseUntrustedPath: the normalised path must
// start (component-wise) with one of the allowed paths.
func (spec *providerSpec) pathAllowed(p string) bool {
	if spec.allowed == nil {
		return true
	}
	n := filepath.Clean(p)
	for _, a := range spec.allowed {
		if n == a || strings.HasPrefix(n, strings.TrimSuffix(a, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// problem is one unresolvable reference (or, with warn, a remark about a
// resolved one).
type problem struct {
	msg, hint string
	warn      bool
}

// resolve replaces every ${provider:[path:]key} in v. It returns the new
// value, whether anything was substituted, and the problems found.
func (ps *providerSet) resolve(v string) (string, bool, []problem) {
	if !strings.Contains(v, "${") {
		return v, false, nil
	}
	var probs []problem
	changed := false
	out := variablePattern.ReplaceAllStringFunc(v, func(m string) string {
		sm := variablePattern.FindStringSubmatch(m)
		name, path, key := sm[1], sm[3], sm[4]
		hasPath := sm[2] != ""
		val, p := ps.lookup(name, path, hasPath, key)
		if p != nil {
			probs = append(probs, *p)
			if !p.warn {
				return m
			}
		}
		changed = true
		return val
	})
	return out, changed, probs
}

func (ps *providerSet) lookup(name, path string, hasPath bool, key string) (string, *problem) {
	expr := "${" + name + ":" + key + "}"
	if hasPath {
		expr = "${" + name + ":" + path + ":" + key + "}"
	}
	spec := ps.declared[name]
	if spec == nil {
		hint := fmt.Sprintf("declare it: config.providers = %s and config.providers.%s.class = <class>", name, name)
		if len(ps.names) > 0 {
			hint = fmt.Sprintf("config.providers lists %s (at %s)", strings.Join(ps.names, ", "), ps.listPos)
		}
		return "", &problem{msg: fmt.Sprintf("%s uses config provider %q, which is not declared in config.providers (MM2 would use the text literally)", expr, name), hint: hint}
	}
	if spec.class == "" {
		return "", &problem{msg: fmt.Sprintf("%s: config provider %q has no config.providers.%s.class", expr, name, name), hint: ""}
	}
	if spec.err != "" {
		return "", &problem{msg: fmt.Sprintf("%s: config provider %q cannot be configured: %s", expr, name, spec.err), hint: "MM2 fails to start with this provider configuration"}
	}
	switch spec.class {
	case FileConfigProviderClass:
		if path == "" {
			return "", &problem{msg: fmt.Sprintf("%s: FileConfigProvider needs a path: ${%s:/path/to/file.properties:%s}", expr, name, key), hint: ""}
		}
		if !spec.pathAllowed(path) {
			return "", &problem{msg: fmt.Sprintf("%s: path %s is outside allowed.paths", expr, path), hint: fmt.Sprintf("add its directory to config.providers.%s.param.allowed.paths, or move the file", name)}
		}
		data, err := ps.readPropsFile(path)
		if err != "" {
			return "", &problem{msg: fmt.Sprintf("%s: %s", expr, err), hint: fmt.Sprintf("create %s (key=value lines, readable by the user kmm runs as) or fix the path", path)}
		}
		v, ok := data[key]
		if !ok {
			return "", &problem{msg: fmt.Sprintf("%s: key %q not found in %s", expr, key, path), hint: fmt.Sprintf("add a line %s=... to %s, or fix the key in the reference", key, path)}
		}
		return v, nil
	case EnvVarConfigProviderClass:
		if path != "" {
			return "", &problem{msg: fmt.Sprintf("%s: Path is not supported for EnvVarConfigProvider, invalid value '%s'", expr, path), hint: fmt.Sprintf("write ${%s:%s}", name, key)}
		}
		if spec.envAllow != nil && !spec.envAllow(key) {
			return "", &problem{msg: fmt.Sprintf("%s: environment variable %s does not match the provider's allowlist.pattern", expr, key), hint: fmt.Sprintf("widen config.providers.%s.param.allowlist.pattern or use another variable", name)}
		}
		v, ok := ps.env(key)
		if !ok {
			return "", &problem{msg: fmt.Sprintf("%s: environment variable %s is not set", expr, key), hint: fmt.Sprintf("set %s in the environment kmm runs in (a service: Environment= or EnvironmentFile= in its unit), then run the command again", key)}
		}
		return v, nil
	case DirectoryConfigProviderClass:
		if path == "" {
			return "", &problem{msg: fmt.Sprintf("%s: DirectoryConfigProvider needs a directory: ${%s:/dir:%s}", expr, name, key), hint: ""}
		}
		if !spec.pathAllowed(path) {
			return "", &problem{msg: fmt.Sprintf("%s: path %s is outside allowed.paths", expr, path), hint: ""}
		}
		st, err := ps.fsys.Stat(path)
		if err != nil || !st.IsDir() {
			return "", &problem{msg: fmt.Sprintf("%s: %s is not a directory", expr, path), hint: ""}
		}
		file := filepath.Join(path, key)
		fst, err := ps.fsys.Stat(file)
		if err != nil || !fst.Mode().IsRegular() || strings.ContainsRune(key, filepath.Separator) {
			return "", &problem{msg: fmt.Sprintf("%s: no file %q in directory %s", expr, key, path), hint: ""}
		}
		b, err := ps.fsys.ReadFile(file)
		if err != nil {
			return "", &problem{msg: fmt.Sprintf("%s: Could not read file %s for property %s", expr, file, key), hint: ""}
		}
		s := string(b)
		if strings.HasSuffix(s, "\n") {
			return s, &problem{msg: fmt.Sprintf("%s: the file %s ends with a newline, which DirectoryConfigProvider keeps as part of the value", expr, file), hint: "write the file without a trailing newline (printf instead of echo)", warn: true}
		}
		return s, nil
	}
	return "", &problem{msg: fmt.Sprintf("%s: config provider class %s is not supported by kmm", expr, spec.class), hint: "kmm implements FileConfigProvider, EnvVarConfigProvider and DirectoryConfigProvider; resolve the value another way"}
}

// readPropsFile reads a properties file as FileConfigProvider does (UTF-8).
func (ps *providerSet) readPropsFile(path string) (map[string]string, string) {
	if m, ok := ps.files[path]; ok {
		return m, ""
	}
	if e, ok := ps.fileErr[path]; ok {
		return nil, e
	}
	b, err := ps.fsys.ReadFile(path)
	if err != nil {
		msg := "Could not read properties from file " + path
		if errors.Is(err, fs.ErrNotExist) {
			msg += ": no such file"
		}
		ps.fileErr[path] = msg
		return nil, msg
	}
	p, _, perr := ParseProperties(path, b, UTF8)
	if perr != nil {
		msg := "Could not read properties from file " + path + ": " + perr.Error()
		ps.fileErr[path] = msg
		return nil, msg
	}
	m := p.Map()
	ps.files[path] = m
	return m, ""
}

// unusedProviders warns about declared providers with unsupported classes
// that nothing references (MM2 would still try to load the class).
func (ps *providerSet) checkDeclared(used map[string]bool) {
	names := make([]string, 0, len(ps.declared))
	for n := range ps.declared {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		spec := ps.declared[n]
		switch spec.class {
		case FileConfigProviderClass, EnvVarConfigProviderClass, DirectoryConfigProviderClass:
			if spec.err != "" && !used[n] {
				ps.sink.err("provider-config", spec.classPos, "config.providers."+n+".class", fmt.Sprintf("config provider %q cannot be configured: %s", n, spec.err), "MM2 fails to start with this provider configuration")
			}
		case "":
			if !used[n] {
				ps.sink.warn("provider-no-class", ps.listPos, "config.providers", fmt.Sprintf("config provider %q has no config.providers.%s.class", n, n), "")
			}
		default:
			if !used[n] {
				ps.sink.warn("provider-unsupported", spec.classPos, "config.providers."+n+".class", fmt.Sprintf("config provider class %s is not supported by kmm (it is not referenced, so this is harmless)", spec.class), "")
			}
		}
	}
}

// providerNames returns the provider names referenced in v.
func providerNames(v string) []string {
	var out []string
	for _, sm := range variablePattern.FindAllStringSubmatch(v, -1) {
		out = append(out, sm[1])
	}
	return out
}
