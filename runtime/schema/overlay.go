package schema

// Overlay builds the arguments a tool runs with after a person answered its input request
// (docs/state-machine.md): the model's arguments without any declared key, plus the person's values
// for declared keys only — (modelArgs − declared) ∪ (human ∩ declared). A declared key the
// person left out is absent from the result, even if the model had set it; a key the person
// sent that the schema does not declare is dropped. The inputs are never modified; the result
// is a new map (never nil) sharing the inputs' values.
func Overlay(modelArgs, human map[string]any, declared []string) map[string]any {
	isDeclared := make(map[string]bool, len(declared))
	for _, k := range declared {
		isDeclared[k] = true
	}
	out := make(map[string]any, len(modelArgs)+len(declared))
	for k, v := range modelArgs {
		if !isDeclared[k] {
			out[k] = v
		}
	}
	for k, v := range human {
		if isDeclared[k] {
			out[k] = v
		}
	}
	return out
}
