package safety

// module is this repository's module path: sanctioned packages are named
// relative to it.
const module = "github.com/deployctl/deployctl/"

// A rule is one class of defect: the pattern's name (as written in
// //safety:allow), the packages that own its safe version (module-relative),
// what the pattern does wrong and what to use instead.
type rule struct {
	name       string
	sanctioned []string
	why        string
	use        string
}

var (
	ruleRead = &rule{"read", []string{"internal/readlimit"},
		"reads without a bound", "internal/readlimit (bounded, refuses non-regular files; Gunzip decompresses bounded)"}
	ruleHTTP = &rule{"http", []string{"internal/safehttp"},
		"makes an HTTP client outside the shared policy", "internal/safehttp (no cross-origin redirects, bounded bodies, redacted errors)"}
	ruleRemove = &rule{"remove", []string{"internal/atomicfile", "pkg/render"},
		"removes or renames a path", "internal/atomicfile or pkg/render (they check what they replace)"}
	ruleDuration = &rule{"duration", []string{"internal/duration"},
		"parses a duration without overflow or receiver checks", "internal/duration"}
	ruleYAML = &rule{"yaml", []string{"internal/safeyaml"},
		"decodes YAML without the alias-expansion bound", "internal/safeyaml"}
	ruleClip = &rule{"clip", []string{"internal/redact"},
		"clips a message by hand (a cut made before masking leaks a credential's prefix)", "internal/redact's Clip (masks, then cuts on a rune boundary)"}
)

// rules by name, for //safety:allow.
var rules = map[string]*rule{}

func init() {
	for _, r := range []*rule{ruleRead, ruleHTTP, ruleRemove, ruleDuration, ruleYAML, ruleClip} {
		rules[r.name] = r
	}
}

// sanctionedIn reports whether the package at path owns r.
func (r *rule) sanctionedIn(path string) bool {
	for _, s := range r.sanctioned {
		if path == module+s {
			return true
		}
	}
	return false
}

// banned are package-level functions and variables whose every use is a
// finding: package path, then name.
var banned = map[string]map[string]*rule{
	"io":        {"ReadAll": ruleRead},
	"io/ioutil": {"ReadAll": ruleRead, "ReadFile": ruleRead},
	"os":        {"ReadFile": ruleRead, "RemoveAll": ruleRemove, "Rename": ruleRemove},
	"net/http": {"DefaultClient": ruleHTTP, "DefaultTransport": ruleHTTP,
		"Get": ruleHTTP, "Post": ruleHTTP, "Head": ruleHTTP, "PostForm": ruleHTTP},
	// A decompressor inflates a small input a thousandfold: bounded only
	// through readlimit.Gunzip (Argo's packer and util/file gunzip whole).
	"compress/gzip":  {"NewReader": ruleRead},
	"compress/zlib":  {"NewReader": ruleRead, "NewReaderDict": ruleRead},
	"compress/flate": {"NewReader": ruleRead, "NewReaderDict": ruleRead},
	"github.com/argoproj/argo-workflows/v3/workflow/packer": {"DecompressWorkflow": ruleRead},
	"github.com/argoproj/argo-workflows/v3/util/file":       {"DecodeDecompressString": ruleRead, "GetGzipReader": ruleRead},
	"time":                              {"ParseDuration": ruleDuration},
	"gopkg.in/yaml.v2":                  yamlDecoders,
	"gopkg.in/yaml.v3":                  yamlDecoders,
	"go.yaml.in/yaml/v2":                yamlDecoders,
	"go.yaml.in/yaml/v3":                yamlDecoders,
	"sigs.k8s.io/yaml":                  {"Unmarshal": ruleYAML, "UnmarshalStrict": ruleYAML, "YAMLToJSON": ruleYAML, "YAMLToJSONStrict": ruleYAML},
	"k8s.io/apimachinery/pkg/util/yaml": {"NewYAMLOrJSONDecoder": ruleYAML, "NewYAMLToJSONDecoder": ruleYAML, "Unmarshal": ruleYAML, "ToJSON": ruleYAML},
}

var yamlDecoders = map[string]*rule{"Unmarshal": ruleYAML, "UnmarshalStrict": ruleYAML, "NewDecoder": ruleYAML}

// clientTypes are net/http types whose every value (a literal, new, a
// variable of the type itself) is a client policy of its own: redirects,
// TLS, proxy, timeouts.
var clientTypes = map[string]bool{"Client": true, "Transport": true}
