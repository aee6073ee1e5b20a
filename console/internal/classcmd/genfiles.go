package classcmd

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/laraworker/laraworker/internal/jobgen"
	"github.com/laraworker/laraworker/internal/phpclass"
)

// genFile is one file gen writes: the class, its Go type's name and path.
type genFile struct {
	class    *phpclass.Class
	typeName string
	path     string
}

func (f genFile) dir() string { return filepath.Dir(f.path) }

// plannedFiles names each class's file and Go type: the type is the
// class's base name, with namespace segments in front for classes that
// share one (App\Jobs\Mail\Send and App\Jobs\Sms\Send: MailSend, SmsSend),
// the file its snake_case form.
func plannedFiles(classes []*phpclass.Class, out string, toFile bool) ([]genFile, error) {
	if toFile {
		return []genFile{{class: classes[0], path: out}}, nil
	}
	names := typeNames(classes)
	files := make([]genFile, 0, len(classes))
	seen := map[string]string{}
	for i, c := range classes {
		path := filepath.Join(out, snakeCase(names[i])+".go")
		if other, ok := seen[strings.ToLower(path)]; ok {
			return nil, fmt.Errorf("gen: %s and %s would both be written to %s", other, c.Name, path)
		}
		seen[strings.ToLower(path)] = c.Name
		files = append(files, genFile{class: c, typeName: names[i], path: path})
	}
	return files, nil
}

// typeNames are the Go type names of classes, made unique by as many
// namespace segments as it takes.
func typeNames(classes []*phpclass.Class) []string {
	segments := make([][]string, len(classes))
	depth := make([]int, len(classes))
	for i, c := range classes {
		segments[i] = strings.Split(strings.TrimPrefix(c.Name, `\`), `\`)
		depth[i] = 1
	}
	name := func(i int) string {
		s := segments[i]
		return jobgen.GoName(strings.Join(s[max(0, len(s)-depth[i]):], "_"))
	}
	for range 8 {
		byName := map[string][]int{}
		for i := range classes {
			byName[name(i)] = append(byName[name(i)], i)
		}
		clash := false
		for _, idx := range byName {
			if len(idx) < 2 {
				continue
			}
			for _, i := range idx {
				if depth[i] < len(segments[i]) {
					depth[i]++
					clash = true
				}
			}
		}
		if !clash {
			break
		}
	}
	out := make([]string, len(classes))
	for i := range classes {
		out[i] = name(i)
	}
	return out
}

// snakeCase is a Go name's file name: ExchangeRatesJob, exchange_rates_job.
func snakeCase(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// existingFiles are the files that exist already.
func existingFiles(files []genFile) []string {
	var out []string
	for _, f := range files {
		if _, err := os.Lstat(f.path); err == nil {
			out = append(out, f.path)
		}
	}
	return out
}

// writeFile writes src to path, making its folder.
func writeFile(path string, src []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	return nil
}

// folderPackage is the package of the Go files in dir (their package
// clause, tests left out) when they agree on one, else the folder's name
// as a Go package name (lower case letters, digits and underscores; jobs
// when nothing of it is left).
func folderPackage(dir string) string {
	if pkg := packageOfFiles(dir); pkg != "" {
		return pkg
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "jobs"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(abs)) {
		switch {
		case r >= 'a' && r <= 'z', r == '_', r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
		}
	}
	name := b.String()
	if name == "" || token.IsKeyword(name) {
		return "jobs"
	}
	return name
}

// packageOfFiles is the one package the non-test Go files of dir declare,
// "" when there are none or they disagree.
func packageOfFiles(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var pkgs []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
		if err != nil {
			continue
		}
		if !slices.Contains(pkgs, parsed.Name.Name) {
			pkgs = append(pkgs, parsed.Name.Name)
		}
	}
	if len(pkgs) != 1 {
		return ""
	}
	return pkgs[0]
}
