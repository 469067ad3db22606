package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func fp(f float64) *float64 { return &f }
func ip(i int) *int         { return &i }

// prop builds the expected Field for a top-level property with the derived names filled in.
func prop(name string, kind Kind, mod func(*Field)) Field {
	f := Field{Name: name, Pointer: "/" + name, FormName: "input/" + name, Label: labelFor(name), Kind: kind}
	if mod != nil {
		mod(&f)
	}
	return f
}

func wrap(props string) string {
	return `{"type":"object","properties":{` + props + `}}`
}

func TestFields(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []Field
	}{
		{"string with everything", `{"type":"object","required":["first_name"],"properties":{"first_name":{"type":"string",
			"minLength":2,"maxLength":40,"pattern":"^[A-Za-z]+$","description":"As on the passport","default":"Ada"}}}`,
			[]Field{prop("first_name", KindString, func(f *Field) {
				f.Label, f.Description, f.Required = "First name", "As on the passport", true
				f.MinLength, f.MaxLength, f.Pattern, f.Default = ip(2), ip(40), "[A-Za-z]+", "Ada"
			})}},
		{"title is the label", wrap(`"n":{"type":"string","title":"Your name"}`),
			[]Field{prop("n", KindString, func(f *Field) { f.Label = "Your name" })}},
		{"label from dashes and unicode", wrap(`"zip-code":{"type":"string"},"übung_nr":{"type":"string"}`),
			[]Field{prop("zip-code", KindString, func(f *Field) { f.Label = "Zip code" }),
				prop("übung_nr", KindString, func(f *Field) { f.Label = "Übung nr" })}},
		{"unanchored pattern", wrap(`"code":{"type":"string","pattern":"[0-9]{3}"}`),
			[]Field{prop("code", KindString, func(f *Field) { f.Pattern = ".*(?:[0-9]{3}).*" })}},
		{"pattern JS cannot read is dropped", wrap(`"code":{"type":"string","pattern":"^\\pL+$"}`),
			[]Field{prop("code", KindString, nil)}},
		{"textarea by maxLength", wrap(`"body":{"type":"string","maxLength":201,"pattern":"^a"},"short":{"type":"string","maxLength":200}`),
			[]Field{prop("body", KindTextarea, func(f *Field) { f.MaxLength = ip(201) }),
				prop("short", KindString, func(f *Field) { f.MaxLength = ip(200) })}},
		{"textarea by x-multiline", wrap(`"notes":{"type":"string","x-multiline":true},"one":{"type":"string","x-multiline":false}`),
			[]Field{prop("notes", KindTextarea, nil), prop("one", KindString, nil)}},
		{"number", wrap(`"price":{"type":"number","minimum":0,"maximum":10.5,"default":2.50}`),
			[]Field{prop("price", KindNumber, func(f *Field) { f.Min, f.Max, f.Step, f.Default = fp(0), fp(10.5), "any", "2.50" })}},
		{"number step from multipleOf", wrap(`"amount":{"type":"number","multipleOf":0.01}`),
			[]Field{prop("amount", KindNumber, func(f *Field) { f.Step = "0.01" })}},
		{"exclusive bounds", wrap(`"r":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`),
			[]Field{prop("r", KindNumber, func(f *Field) {
				f.Min, f.Max, f.ExclusiveMin, f.ExclusiveMax, f.Step = fp(0), fp(1), true, true, "any"
			})}},
		{"tighter of minimum and exclusiveMinimum", wrap(`"r":{"type":"number","minimum":5,"exclusiveMinimum":1}`),
			[]Field{prop("r", KindNumber, func(f *Field) { f.Min, f.Step = fp(5), "any" })}},
		{"integer", wrap(`"qty":{"type":"integer","minimum":1,"default":3}`),
			[]Field{prop("qty", KindInteger, func(f *Field) { f.Min, f.Step, f.Default = fp(1), "1", "3" })}},
		{"integer step from multipleOf", wrap(`"n":{"type":"integer","multipleOf":5}`),
			[]Field{prop("n", KindInteger, func(f *Field) { f.Step = "5" })}},
		{"integer or number is a number", wrap(`"n":{"type":["integer","number"]}`),
			[]Field{prop("n", KindNumber, func(f *Field) { f.Step = "any" })}},
		{"boolean defaults", wrap(`"on":{"type":"boolean","default":true},"off":{"type":"boolean","default":false}`),
			[]Field{prop("on", KindBoolean, func(f *Field) { f.Default = "true" }), prop("off", KindBoolean, nil)}},
		{"enum of strings", wrap(`"color":{"type":"string","enum":["red","green"],"default":"green"}`),
			[]Field{prop("color", KindEnum, func(f *Field) {
				f.Options, f.OptionLabels, f.Default = []string{"red", "green"}, []string{"red", "green"}, "green"
			})}},
		{"enum of integers", wrap(`"level":{"type":"integer","enum":[1,2,3],"default":2}`),
			[]Field{prop("level", KindEnum, func(f *Field) {
				f.Options, f.OptionLabels, f.Default = []string{"1", "2", "3"}, []string{"1", "2", "3"}, "2"
			})}},
		{"mixed enum without type, null and empty dropped", wrap(`"m":{"enum":["a",1.5,true,null,""]}`),
			[]Field{prop("m", KindEnum, func(f *Field) { f.Options, f.OptionLabels = []string{"a", "1.5", "true"}, []string{"a", "1.5", "true"} })}},
		{"default outside the enum is not pre-filled", wrap(`"c":{"enum":["a","b"],"default":"z"}`),
			[]Field{prop("c", KindEnum, func(f *Field) { f.Options, f.OptionLabels = []string{"a", "b"}, []string{"a", "b"} })}},
		{"const is a one-option enum", wrap(`"agree":{"const":"yes"}`),
			[]Field{prop("agree", KindEnum, func(f *Field) { f.Options, f.OptionLabels = []string{"yes"}, []string{"yes"} })}},
		{"boolean enum", wrap(`"b":{"type":"boolean","enum":[true]}`),
			[]Field{prop("b", KindEnum, func(f *Field) { f.Options, f.OptionLabels = []string{"true"}, []string{"true"} })}},
		{"titled enum: oneOf of const and title", wrap(`"reason":{"type":"string","title":"Reason","oneOf":[
			{"const":"original_payment","title":"Refund to the original payment"},{"const":"store_credit","title":"Store credit"},
			{"const":"cash"}],"default":"store_credit"}`),
			[]Field{prop("reason", KindEnum, func(f *Field) {
				f.Label, f.Default = "Reason", "store_credit"
				f.Options = []string{"original_payment", "store_credit", "cash"}
				f.OptionLabels = []string{"Refund to the original payment", "Store credit", "cash"}
			})}},
		{"titled enum of integers, nullable, anyOf", wrap(`"prio":{"anyOf":[{"const":1,"title":"Low"},{"const":2,"title":"High"},{"type":"null"}]}`),
			[]Field{prop("prio", KindEnum, func(f *Field) { f.Options, f.OptionLabels = []string{"1", "2"}, []string{"Low", "High"} })}},
		{"titled enum items (MCP multi-select)", wrap(`"channels":{"type":"array","items":{"anyOf":[
			{"const":"mail","title":"E-mail"},{"const":"sms","title":"Text message"}]},"default":["sms"]}`),
			[]Field{prop("channels", KindMultiEnum, func(f *Field) {
				f.Options, f.OptionLabels, f.DefaultList = []string{"mail", "sms"}, []string{"E-mail", "Text message"}, []string{"sms"}
			})}},
		{"a oneOf branch that is more than a titled const is not an enum", wrap(`"mixed":{"oneOf":[{"const":"a","title":"A"},{"type":"integer"}]}`),
			[]Field{prop("mixed", KindJSON, nil)}},
		{"formats", wrap(`"d":{"type":"string","format":"date"},"dt":{"type":"string","format":"date-time"},
			"t":{"type":"string","format":"time"},"e":{"type":"string","format":"email"},"ie":{"type":"string","format":"idn-email"},
			"u":{"type":"string","format":"uri"},"i":{"type":"string","format":"iri"},"id":{"type":"string","format":"uuid"}`),
			[]Field{
				prop("d", KindDate, func(f *Field) { f.Format = "date" }),
				prop("dt", KindDateTime, func(f *Field) { f.Format = "date-time" }),
				prop("t", KindTime, func(f *Field) { f.Format = "time" }),
				prop("e", KindEmail, func(f *Field) { f.Format = "email" }),
				prop("ie", KindEmail, func(f *Field) { f.Format = "idn-email" }),
				prop("u", KindURI, func(f *Field) { f.Format = "uri" }),
				prop("i", KindURI, func(f *Field) { f.Format = "iri" }),
				prop("id", KindString, func(f *Field) { f.Format = "uuid" }),
			}},
		{"nested object, required and inherited defaults", `{"type":"object","required":["address"],"properties":{"address":{
			"type":"object","title":"Postal address","required":["street"],"default":{"city":"Berlin","street":5},
			"properties":{"street":{"type":"string"},"city":{"type":"string"},"geo":{"type":"object","properties":{"lat":{"type":"number"}}}}}}}`,
			[]Field{prop("address", KindObject, func(f *Field) {
				f.Label, f.Required = "Postal address", true
				f.Children = []Field{
					{Name: "street", Pointer: "/address/street", FormName: "input/address/street", Label: "Street", Required: true, Kind: KindString},
					{Name: "city", Pointer: "/address/city", FormName: "input/address/city", Label: "City", Kind: KindString, Default: "Berlin"},
					{Name: "geo", Pointer: "/address/geo", FormName: "input/address/geo", Label: "Geo", Kind: KindObject, Children: []Field{
						{Name: "lat", Pointer: "/address/geo/lat", FormName: "input/address/geo/lat", Label: "Lat", Kind: KindNumber, Step: "any"},
					}},
				}
			})}},
		{"pointer escaping", wrap(`"a/b~c":{"type":"string"}`),
			[]Field{{Name: "a/b~c", Pointer: "/a~1b~0c", FormName: "input/a~1b~0c", Label: "A/b~c", Kind: KindString}}},
		{"array of integers", wrap(`"ids":{"type":"array","minItems":1,"maxItems":5,"items":{"type":"integer","maximum":10},"default":[1,2]}`),
			[]Field{prop("ids", KindArray, func(f *Field) {
				f.MinItems, f.MaxItems, f.Default, f.DefaultList = ip(1), ip(5), "1\n2", []string{"1", "2"}
				f.Item = &Field{Kind: KindInteger, Max: fp(10), Step: "1"}
			})}},
		{"array of formatted strings", wrap(`"days":{"type":"array","items":{"type":"string","format":"date","description":"a day"}}`),
			[]Field{prop("days", KindArray, func(f *Field) { f.Item = &Field{Kind: KindDate, Format: "date", Description: "a day"} })}},
		{"array of long strings is one per line", wrap(`"lines":{"type":"array","items":{"type":"string","maxLength":500,"pattern":"^x"}}`),
			[]Field{prop("lines", KindArray, func(f *Field) { f.Item = &Field{Kind: KindString, MaxLength: ip(500), Pattern: ".*(?:^x).*"} })}},
		{"array without items", wrap(`"any":{"type":"array"}`),
			[]Field{prop("any", KindArray, func(f *Field) { f.Item = &Field{Kind: KindString} })}},
		{"array of enum", wrap(`"days":{"type":"array","uniqueItems":true,"items":{"enum":["mon","tue","wed"]},"default":["tue","sun","tue"]}`),
			[]Field{prop("days", KindMultiEnum, func(f *Field) {
				f.Options, f.OptionLabels, f.DefaultList = []string{"mon", "tue", "wed"}, []string{"mon", "tue", "wed"}, []string{"tue"}
			})}},
		{"array of objects is rows", wrap(`"lines":{"type":"array","title":"Order lines","minItems":1,"maxItems":5,
			"items":{"type":"object","title":"Line","required":["sku"],"properties":{"sku":{"type":"string"},"qty":{"type":"integer"}}},
			"default":[{"sku":"A-1","qty":2}]}`),
			[]Field{prop("lines", KindRows, func(f *Field) {
				f.Label, f.MinItems, f.MaxItems = "Order lines", ip(1), ip(5)
				row := func(sku, qty string) Field {
					return Field{Label: "Line", Required: true, Kind: KindObject, Children: []Field{
						{Name: "sku", Pointer: "/sku", FormName: "input/sku", Label: "Sku", Required: true, Kind: KindString, Default: sku},
						{Name: "qty", Pointer: "/qty", FormName: "input/qty", Label: "Qty", Kind: KindInteger, Step: "1", Default: qty},
					}}
				}
				item := row("", "")
				f.Item, f.DefaultRows = &item, []Field{row("A-1", "2")}
			})}},
		{"nullable type list", wrap(`"n":{"type":["string","null"],"maxLength":3}`),
			[]Field{prop("n", KindString, func(f *Field) { f.MaxLength = ip(3) })}},
		{"nullable anyOf (pydantic Optional)", wrap(`"note":{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}],"default":null,"title":"Note"}`),
			[]Field{prop("note", KindString, func(f *Field) { f.MaxLength = ip(5) })}},
		{"reference with sibling annotations", `{"type":"object","properties":{"a":{"$ref":"#/$defs/A","description":"the A"},
			"c":{"allOf":[{"$ref":"#/$defs/C"}],"title":"See"}},"$defs":{"A":{"type":"string","title":"Alpha","maxLength":4},
			"C":{"type":"object","required":["z"],"properties":{"z":{"type":"string"},"b":{"type":"integer"}}}}}`,
			[]Field{prop("a", KindString, func(f *Field) { f.Label, f.Description, f.MaxLength = "Alpha", "the A", ip(4) }),
				prop("c", KindObject, func(f *Field) {
					f.Label = "See"
					f.Children = []Field{
						{Name: "z", Pointer: "/c/z", FormName: "input/c/z", Label: "Z", Required: true, Kind: KindString},
						{Name: "b", Pointer: "/c/b", FormName: "input/c/b", Label: "B", Kind: KindInteger, Step: "1"},
					}
				})}},
		{"no type is text; properties make an object", wrap(`"free":{"description":"anything"},"obj":{"properties":{"x":{"type":"boolean"}}}`),
			[]Field{prop("free", KindString, func(f *Field) { f.Description = "anything" }),
				prop("obj", KindObject, func(f *Field) {
					f.Children = []Field{{Name: "x", Pointer: "/obj/x", FormName: "input/obj/x", Label: "X", Kind: KindBoolean}}
				})}},
		{"a property that can never be present is left out", wrap(`"gone":false,"kept":{"type":"string"}`),
			[]Field{prop("kept", KindString, nil)}},
		{"JSON fallbacks", wrap(`"one":{"oneOf":[{"type":"string"},{"type":"integer"}]},
			"any":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]},
			"rows":{"type":"array","items":{"type":"object","additionalProperties":{"type":"string"}}},
			"matrix":{"type":"array","items":{"type":"array"}},
			"either":{"type":["string","number"]},
			"map":{"type":"object","additionalProperties":{"type":"string"}},
			"tuple":{"type":"array","prefixItems":[{"type":"string"}]},
			"whatever":true,
			"objenum":{"enum":[{"a":1}]},
			"clash":{"enum":[1,"1"]},
			"nullonly":{"type":"null"},
			"anyitems":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer"}]}},
			"both":{"allOf":[{"properties":{"a":{}}},{"properties":{"b":{}}}]},
			"withdef":{"oneOf":[{"type":"object"},{"type":"string"}],"default":{"k":[1,2]}}`),
			[]Field{prop("one", KindJSON, nil), prop("any", KindJSON, nil), prop("rows", KindJSON, nil),
				prop("matrix", KindJSON, nil), prop("either", KindJSON, nil), prop("map", KindJSON, nil),
				prop("tuple", KindJSON, nil), prop("whatever", KindJSON, nil), prop("objenum", KindJSON, nil),
				prop("clash", KindJSON, nil), prop("nullonly", KindJSON, nil), prop("anyitems", KindJSON, nil),
				prop("both", KindJSON, nil),
				prop("withdef", KindJSON, func(f *Field) { f.Default = "{\n  \"k\": [\n    1,\n    2\n  ]\n}" })}},
		{"declaration order kept at every level", `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"$ref":"#/$defs/o"},"mid":{"type":"string"}},
			"$defs":{"o":{"type":"object","properties":{"y":{"type":"string"},"b":{"type":"string"}}}}}`,
			[]Field{prop("zeta", KindString, nil), prop("alpha", KindObject, func(f *Field) {
				f.Children = []Field{
					{Name: "y", Pointer: "/alpha/y", FormName: "input/alpha/y", Label: "Y", Kind: KindString},
					{Name: "b", Pointer: "/alpha/b", FormName: "input/alpha/b", Label: "B", Kind: KindString},
				}
			}), prop("mid", KindString, nil)}},
		{"declaration order under $id", `{"$id":"https://example.com/in","type":"object","properties":{"z":{"$ref":"#/$defs/o"},
			"n":{"$id":"https://example.com/n","type":"object","properties":{"y":{"type":"string"},"b":{"type":"string"}}}},
			"$defs":{"o":{"type":"object","properties":{"y":{"type":"string"},"b":{"type":"string"}}}}}`,
			[]Field{prop("z", KindObject, func(f *Field) {
				f.Children = []Field{
					{Name: "y", Pointer: "/z/y", FormName: "input/z/y", Label: "Y", Kind: KindString},
					{Name: "b", Pointer: "/z/b", FormName: "input/z/b", Label: "B", Kind: KindString},
				}
			}), prop("n", KindObject, func(f *Field) {
				f.Children = []Field{
					{Name: "y", Pointer: "/n/y", FormName: "input/n/y", Label: "Y", Kind: KindString},
					{Name: "b", Pointer: "/n/b", FormName: "input/n/b", Label: "B", Kind: KindString},
				}
			})}},
		{"a recursive schema stops at the first repeat", `{"type":"object","properties":{"node":{"$ref":"#/$defs/n"}},
			"$defs":{"n":{"type":"object","properties":{"child":{"$ref":"#/$defs/n"},"v":{"type":"string"}}}}}`,
			[]Field{prop("node", KindObject, func(f *Field) {
				f.Children = []Field{
					{Name: "child", Pointer: "/node/child", FormName: "input/node/child", Label: "Child", Kind: KindJSON},
					{Name: "v", Pointer: "/node/v", FormName: "input/node/v", Label: "V", Kind: KindString},
				}
			})}},
		{"root without a type but with properties", `{"properties":{"a":{"type":"string"}}}`,
			[]Field{prop("a", KindString, nil)}},
		{"nullable root", `{"type":["object","null"],"properties":{"a":{"type":"string"}}}`,
			[]Field{prop("a", KindString, nil)}},
		{"root combinators still give a form", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
			[]Field{prop("a", KindString, nil), prop("b", KindString, nil)}},
		{"scalar root has no form", `{"type":"string"}`, nil},
		{"object root without properties has no form", `{"type":"object"}`, nil},
		{"root reference is not followed (DeclaredKeys would not know it)", `{"$ref":"#/$defs/r","$defs":{"r":{"type":"object","properties":{"a":{}}}}}`, nil},
		{"root properties only false", `{"type":"object","properties":{"a":false}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.raw)
			got := s.Fields()
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(tt.want, "", " ")
				t.Errorf("Fields():\n got  %s\n want %s", g, w)
			}
		})
	}
}

func TestFieldsDepthBound(t *testing.T) {
	raw := `{"type":"string"}`
	for range maxFormDepth + 2 {
		raw = `{"type":"object","properties":{"n":` + raw + `}}`
	}
	s := mustCompile(t, raw)
	f := s.Fields()[0]
	depth := 1
	for f.Kind == KindObject {
		f = f.Children[0]
		depth++
	}
	if f.Kind != KindJSON || depth != maxFormDepth {
		t.Errorf("deepest field: kind %s at depth %d, want json at %d", f.Kind, depth, maxFormDepth)
	}
}

func TestFieldsBudgetGivesOneJSONField(t *testing.T) {
	var defs []string
	defs = append(defs, `"l0":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"}}}`)
	for i := 1; i <= 4; i++ {
		p := `{"$ref":"#/$defs/l` + string(rune('0'+i-1)) + `"}`
		defs = append(defs, `"l`+string(rune('0'+i))+`":{"type":"object","properties":{"a":`+p+`,"b":`+p+`,"c":`+p+`,"d":`+p+`,"e":`+p+`}}`)
	}
	raw := `{"type":"object","title":"Big","description":"Many","default":{"x":{}},"required":["x"],"properties":{"x":{"$ref":"#/$defs/l4"}},"$defs":{` + strings.Join(defs, ",") + `}}`
	s := mustCompile(t, raw)
	want := []Field{{FormName: "input", Label: "Big", Description: "Many", Required: true, Kind: KindJSON, Default: "{\n  \"x\": {}\n}"}}
	if got := s.Fields(); !reflect.DeepEqual(got, want) {
		t.Errorf("Fields() = %+v, want %+v", got, want)
	}
}

func TestFieldsReturnsACopy(t *testing.T) {
	s := mustCompile(t, wrap(`"n":{"type":"number","minimum":1,"enum":[1,2]},"o":{"type":"object","properties":{"x":{"type":"integer","maximum":3}}}`))
	a := s.Fields()
	a[0].Options[0] = "changed"
	a[1].Children[0].Label = "changed"
	*a[1].Children[0].Max = 99
	b := s.Fields()
	if b[0].Options[0] != "1" || b[1].Children[0].Label != "X" || *b[1].Children[0].Max != 3 {
		t.Errorf("Fields() shares memory with earlier results: %+v", b)
	}
}

func TestLabelFor(t *testing.T) {
	for in, want := range map[string]string{
		"first_name": "First name", "zip-code": "Zip code", "a": "A", "": "Input",
		"already Fine": "Already Fine", "ärger": "Ärger", "_x": " x", "\xff": "\xff",
	} {
		if got := labelFor(in); got != want {
			t.Errorf("labelFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHasFormAgreesWithFields(t *testing.T) {
	for _, raw := range []string{
		wrap(`"a":{"type":"string"}`),
		`{"type":"object","properties":{"never":false}}`,
		`{"type":"string"}`,
		`{"type":"object"}`,
	} {
		s := mustCompile(t, raw)
		if got, want := s.HasForm(), len(s.Fields()) > 0; got != want {
			t.Errorf("HasForm(%s) = %v, want %v", raw, got, want)
		}
		if got := s.NoFormReason(); (got == "") != s.HasForm() {
			t.Errorf("NoFormReason(%s) = %q with HasForm %v", raw, got, s.HasForm())
		}
	}
}
