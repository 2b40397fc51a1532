package deploy

// Function returns the logical id of the AWS::Lambda::Function that id invokes: id itself for a function, the
// function whose FunctionName an AWS::Lambda::Alias names for an alias (SAM's AutoPublishAlias), "" otherwise.
func (t *Template) Function(id string) string {
	switch r := t.Resources[id]; r.Type {
	case "AWS::Lambda::Function":
		return id
	case "AWS::Lambda::Alias":
		if fn := ref(r.Properties["FunctionName"]); t.Resources[fn].Type == "AWS::Lambda::Function" {
			return fn
		}
	}
	return ""
}

// Aliases returns the logical ids of the AWS::Lambda::Alias resources of function fn, sorted.
func (t *Template) Aliases(fn string) []string {
	var ids []string
	for _, id := range t.OfType("AWS::Lambda::Alias") {
		if t.Function(id) == fn {
			ids = append(ids, id)
		}
	}
	return ids
}
