package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tree's shape, a ratchet: issue 34 measured 28 top-level
// directories with Go code and 25 public packages before the move; after
// it (and the SQS and beanstalkd stores, 4 packages) 11 and 17, with
// 1,091 exported identifiers; with the three stores' wire protocols and
// Horizon's records moved to internal/ (nothing outside the module calls
// them: the stores' Open does), 11 and 13, with 845. A new top-level
// directory, public package or a surface past these bounds is a decision
// for ARCHITECTURE.md, not an accident. `go test -v -run TestTreeShape ./internal/archtest/`
// prints the figures.
const (
	maxTopLevelGoDirs  = 11
	maxPublicPackages  = 13
	maxExportedPublics = 860
)

// TestTreeShape counts the top-level directories holding Go code, the
// importable packages outside internal/ and test/ (a library user's
// surface; main, docs and deploy hold tests only) and their exported
// identifiers (functions, types, methods of exported types, constants,
// variables; not struct fields).
func TestTreeShape(t *testing.T) {
	var top = map[string]bool{}
	var public []string
	for _, p := range modulePackages(t) {
		first, _, _ := strings.Cut(p.Path, "/")
		if p.Path != "" {
			top[first] = true
		}
		if isPublicLibrary(p.Path) {
			public = append(public, p.Path)
		}
	}
	exported := 0
	for _, path := range public {
		exported += exportedIn(t, filepath.Join("..", "..", path))
	}
	t.Logf("%d top-level directories with Go code, %d public packages %v, %d exported identifiers in them", len(top), len(public), public, exported)
	if len(top) > maxTopLevelGoDirs || len(public) > maxPublicPackages || exported > maxExportedPublics {
		t.Errorf("the tree outgrew its bounds (%d/%d top-level, %d/%d public packages, %d/%d exported): update ARCHITECTURE.md and these bounds together",
			len(top), maxTopLevelGoDirs, len(public), maxPublicPackages, exported, maxExportedPublics)
	}
}

// isPublicLibrary: a package a program outside the module may import and
// that holds library code.
func isPublicLibrary(path string) bool {
	switch {
	case path == "", path == "docs", path == "deploy":
		return false
	case strings.HasPrefix(path, "test/"), strings.HasPrefix(path, "examples/"):
		return false
	}
	return !strings.Contains("/"+path+"/", "/internal/")
}

// exportedIn counts the exported identifiers of one package's non-test
// files for this platform (go list's GoFiles: build tags applied).
func exportedIn(t *testing.T, dir string) int {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{join .GoFiles \"\\n\"}}", "./"+dir).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range strings.Fields(string(out)) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		n += exportedDecls(f)
	}
	return n
}

func exportedDecls(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || receiverExported(d.Recv)) {
				n++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				n += exportedSpec(s)
			}
		}
	}
	return n
}

func exportedSpec(s ast.Spec) int {
	n := 0
	switch s := s.(type) {
	case *ast.TypeSpec:
		if !s.Name.IsExported() {
			return 0
		}
		n++
	case *ast.ValueSpec:
		for _, name := range s.Names {
			if name.IsExported() {
				n++
			}
		}
	}
	return n
}

func receiverExported(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
