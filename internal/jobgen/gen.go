package jobgen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/token"
	"slices"
	"strconv"
	"strings"

	"github.com/laraworker/laraworker/internal/phpclass"
)

// Options shape the generated file.
type Options struct {
	// Package is the Go package name (default "jobs").
	Package string
	// Version is the app's Laravel version, for the header and the
	// version-dependent declarations ("" when unknown).
	Version string
	// TypeName names the struct (default: the class's base name as a Go
	// name); Register<TypeName> registers it.
	TypeName string
}

// Field is one struct field of a generated type.
type Field struct {
	GoName  string
	PHPName string
	Type    GoType
	// Default is the default= JSON, "" for none.
	Default string
	// DefaultPHP is the default_php= value (the default as serialize()
	// writes it) where JSON cannot say the default, "" for none.
	DefaultPHP string
	// Comment describes the PHP property.
	Comment string
}

// Fields are the struct fields for a class's data properties, in
// declaration order, with unique Go names.
func Fields(c *phpclass.Class) []Field {
	var out []Field
	used := map[string]int{}
	for _, p := range c.DataProperties() {
		gt := TypeIn(c, p)
		name := GoName(p.Name)
		if used[name]++; used[name] > 1 {
			name += strconv.Itoa(used[name])
		}
		f := Field{GoName: name, PHPName: p.Name, Type: gt, Comment: describeProperty(p, gt)}
		if def, ok := defaultJSON(p, gt); ok {
			f.Default = def
			if gt.Expr == "any" && hasNumber(def) {
				f.Comment += ". Absent, its default's numbers read as float64 (JSON's), where the payload's ints are int64"
			}
		} else if def, ok := defaultPHP(p, gt); ok {
			f.DefaultPHP = def
		}
		out = append(out, f)
	}
	return out
}

// describeProperty is the field's comment: the PHP declaration, and what
// Go needs to know about its value.
func describeProperty(p phpclass.Property, gt GoType) string {
	decl := p.Visibility + " "
	if p.Type != nil {
		decl += p.Type.Text + " "
	}
	decl += "$" + p.Name
	if p.HasDefault && p.Type != nil {
		decl += " = " + p.DefaultPHP
	}
	if p.Promoted {
		decl += " (promoted"
		if p.ParamDefaultPHP != "" {
			decl += ", constructor default " + p.ParamDefaultPHP
		}
		decl += ")"
	}
	if gt.Note != "" {
		decl += ": " + gt.Note
	}
	if p.HasDefault && !p.DefaultJSONOK && len(p.DefaultSerialized) == 0 {
		decl += ". Its default has no JSON form: a job that left it out (Laravel 9.4+ does while it holds the default) fails to decode; give the struct a PHPDefaults method"
	}
	return decl
}

// Generate returns a gofmt'ed Go file for class: its struct and a
// registration with a handler skeleton.
func Generate(app *phpclass.App, c *phpclass.Class, opts Options) ([]byte, error) {
	if c.Error != "" {
		return nil, fmt.Errorf("jobgen: %s: %s", c.Name, c.Error)
	}
	pkg := opts.Package
	if pkg == "" {
		pkg = "jobs"
	}
	if !token.IsIdentifier(pkg) || token.IsKeyword(pkg) {
		return nil, fmt.Errorf("jobgen: %q is not a Go package name", pkg)
	}
	typeName := opts.TypeName
	if typeName == "" {
		typeName = GoName(baseName(c.Name))
	}
	if !token.IsIdentifier(typeName) || !token.IsExported(typeName) {
		return nil, fmt.Errorf("jobgen: %q is not an exported Go type name", typeName)
	}
	g := &generator{class: c, app: app, opts: opts, typeName: typeName,
		imports: map[string]bool{"context": true, "github.com/laraworker/laraworker/handlers": true}}
	g.fields = Fields(c)
	var body bytes.Buffer
	g.writeStruct(&body)
	g.writeRegister(&body)

	var out bytes.Buffer
	g.writeHeader(&out, pkg)
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("jobgen: %s: the generated code does not parse (%v):\n%s", c.Name, err, out.Bytes())
	}
	return src, nil
}

type generator struct {
	app      *phpclass.App
	class    *phpclass.Class
	opts     Options
	typeName string
	fields   []Field
	imports  map[string]bool
}

func (g *generator) writeHeader(w *bytes.Buffer, pkg string) {
	version := g.opts.Version
	if version == "" && g.app != nil {
		version = g.app.Version
	}
	fmt.Fprintf(w, "// Code written by `laraworker gen` from %s", g.class.Name)
	if version != "" {
		fmt.Fprintf(w, "\n// (Laravel %s)", version)
	}
	w.WriteString(". The file is yours: write the handler. `laraworker audit`\n// says what the class does beyond handle() and who does it in Go.\n\n")
	fmt.Fprintf(w, "package %s\n\nimport (\n", pkg)
	var std, mod []string
	for imp := range g.imports {
		if strings.Contains(imp, ".") {
			mod = append(mod, imp)
		} else {
			std = append(std, imp)
		}
	}
	slices.Sort(std)
	slices.Sort(mod)
	for _, imp := range std {
		fmt.Fprintf(w, "\t%q\n", imp)
	}
	if len(std) > 0 && len(mod) > 0 {
		w.WriteString("\n")
	}
	for _, imp := range mod {
		fmt.Fprintf(w, "\t%q\n", imp)
	}
	w.WriteString(")\n\n")
}

func (g *generator) writeStruct(w *bytes.Buffer) {
	fmt.Fprintf(w, "// %s holds the properties of %s.\n", g.typeName, g.class.Name)
	w.WriteString("// handlers.Register fills it from each job's command before the handler\n")
	w.WriteString("// runs. Laravel 9.4+ leaves a property out of the job while it holds its\n")
	w.WriteString("// declared default: the default= (JSON) and default_php= (serialize()'s\n")
	w.WriteString("// form) tags say what PHP holds then; PHP leaves out an uninitialised\n")
	w.WriteString("// property too: an optional field is nil then.\n")
	fmt.Fprintf(w, "type %s struct {\n", g.typeName)
	for _, f := range g.fields {
		for _, imp := range f.Type.Imports {
			g.imports[imp] = true
		}
		fmt.Fprintf(w, "\t// %s\n", oneLine(f.Comment))
		tag := f.PHPName
		switch {
		case f.Default != "":
			tag += ",default=" + f.Default
		case f.DefaultPHP != "":
			tag += ",default_php=" + f.DefaultPHP
		case f.Type.Optional:
			tag += ",optional"
		}
		fmt.Fprintf(w, "\t%s %s %s\n", f.GoName, f.Type.Expr, structTag("php:"+strconv.Quote(tag)))
	}
	w.WriteString("}\n\n")
}

// structTag quotes a struct tag: raw when it can be.
func structTag(tag string) string {
	if !strconv.CanBackquote(tag) {
		return strconv.Quote(tag)
	}
	return "`" + tag + "`"
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (g *generator) writeRegister(w *bytes.Buffer) {
	c := g.class
	fmt.Fprintf(w, "// Register%s routes the jobs of %s to Go.\n", g.typeName, c.Name)
	fmt.Fprintf(w, "func Register%s(reg *handlers.Registry) {\n", g.typeName)
	if c.HasMethod("displayName") {
		fmt.Fprintf(w, "\t// %s defines displayName(): register under the name it returns (the payload's displayName).\n", c.Name)
	}
	fmt.Fprintf(w, "\thandlers.Register(reg, `%s`, func(ctx context.Context, job *handlers.Job, cmd *%s) error {\n", c.Name, g.typeName)
	fmt.Fprintf(w, "\t\t// TODO: what %s::handle() does. Returning nil deletes the job; an\n", c.Name)
	w.WriteString("\t\t// error releases or fails it by Laravel's rules (tries, backoff).\n")
	for _, note := range g.hookNotes() {
		fmt.Fprintf(w, "\t\t// %s\n", note)
	}
	w.WriteString("\t\treturn nil\n\t}")
	opts := g.options()
	for _, opt := range opts {
		fmt.Fprintf(w, ",\n\t\t%s", opt)
	}
	if len(opts) > 0 {
		w.WriteString(",\n\t")
	}
	w.WriteString(")\n}\n")
}

// hookNotes name what the class does besides handle(), for the reader of
// the skeleton.
func (g *generator) hookNotes() []string {
	c := g.class
	var out []string
	bridge := g.app != nil && g.app.Bridge.Has(phpclass.CapFailed)
	switch {
	case c.HasMethod("failed") && bridge:
		out = append(out, "failed() stays PHP code: the bridge runs it in PHP when Go fails a job.")
	case c.HasMethod("failed"):
		out = append(out, "failed() is PHP code, which does not run when Go fails a job without the bridge.")
	}
	if c.Middleware != nil {
		out = append(out, "middleware(): `laraworker audit` says which of it Go applies around this handler.")
	}
	return out
}

// options are the handlers.Option expressions declaring the class.
func (g *generator) options() []string {
	c := g.class
	var out []string
	if c.Is("ShouldBeUnique") {
		ctor := "handlers.ShouldBeUnique"
		if c.Is("ShouldBeUniqueUntilProcessing") {
			ctor = "handlers.ShouldBeUniqueUntilProcessing"
		}
		out = append(out, ctor+"("+g.uniqueID()+")")
		if v := c.UniqueVia; v != nil && v.Store != nil && !v.Default {
			out = append(out, "handlers.UniqueVia("+strconv.Quote(*v.Store)+")")
		} else if v != nil && !v.Default {
			out = append(out, "// TODO: uniqueVia() returns "+oneLine(v.Expr)+": name its cache store with handlers.UniqueVia(\"...\")")
		}
	}
	if DeletesWhenMissingModels(c, g.version()) {
		out = append(out, "handlers.DeleteWhenMissingModels()")
	}
	// Without SerializesModels a model travels whole: nothing to look up.
	if models := c.Models(); len(models) > 0 && c.Uses("SerializesModels") {
		var ms []string
		for _, m := range models {
			decl := fmt.Sprintf("handlers.Model{Class: `%s`, Table: %q", m.Class, m.Table)
			if m.Key != "" && m.Key != "id" {
				decl += fmt.Sprintf(", Key: %q", m.Key)
			}
			ms = append(ms, decl+"}")
		}
		out = append(out, "handlers.Models(\n\t\t\t"+strings.Join(ms, ",\n\t\t\t")+",\n\t\t)")
	}
	return out
}

func (g *generator) version() string {
	if g.opts.Version != "" || g.app == nil {
		return g.opts.Version
	}
	return g.app.Version
}

// uniqueID is the UniqueIDFunc expression for the class's uniqueId().
func (g *generator) uniqueID() string {
	c := g.class
	switch {
	case c.UniqueIDProperty != nil:
		return "handlers.UniqueIDProperty(" + strconv.Quote(*c.UniqueIDProperty) + ")"
	case c.HasMethod("uniqueId"):
		g.imports["errors"] = true
		g.imports[importPayload] = true
		return "func(cmd *payload.Command) (string, error) {\n" +
			"\t\t\t// Laravel 11.39+ names the lock in the payload and never calls this.\n" +
			"\t\t\treturn \"\", errors.New(" + strconv.Quote("port "+c.Name+"::uniqueId() to Go") + ")\n\t\t}"
	}
	if _, ok := c.Property("uniqueId"); ok {
		return `handlers.UniqueIDProperty("uniqueId")`
	}
	return "nil"
}

// DeletesWhenMissingModels reports whether Laravel (version, "" for
// unknown) deletes a job of the class whose model is gone:
// $deleteWhenMissingModels = true, or #[DeleteWhenMissingModels] on 11.3+.
func DeletesWhenMissingModels(c *phpclass.Class, version string) bool {
	if p, ok := c.Property("deleteWhenMissingModels"); ok && p.HasDefault && string(p.Default) == "true" {
		return true
	}
	_, attr := c.Attribute(`Illuminate\Queue\Attributes\DeleteWhenMissingModels`)
	return attr && (version == "" || phpclass.VersionAtLeast(version, "11.3"))
}
