package service

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/store"
)

// Export returns the permissions section as a config.yaml document whose
// only top-level key is `permissions`, with the comments it has where it is
// stored: the section's node of config.yaml rendered alone, or the stored
// document of a database (already that shape). src is the store's backend
// (store.Store.Backend); nil reads config.yaml of the store's config dir
// (store.Store.Dir), and without one the section in force is encoded (no
// comments).
func (p *Policy) Export(ctx context.Context, src DocumentSource) ([]byte, error) {
	var text []byte
	switch {
	case src != nil:
		doc, err := src.Read(ctx)
		if err != nil {
			return nil, err
		}
		if doc.ConfigErr != nil {
			return nil, store.Refuse(store.ErrBrokenConfig, "config.yaml does not parse: %v", doc.ConfigErr)
		}
		text = doc.Config
	default:
		d, ok := p.docs.(interface{ Dir() string })
		if !ok || d.Dir() == "" { // no config dir (a database backend given no src)
			sec, _, err := p.Section()
			if err != nil {
				return nil, err
			}
			return yaml.Marshal(struct {
				Permissions any `yaml:"permissions"` // the section as stored
			}{sec.Map()})
		}
		raw, err := os.ReadFile(filepath.Join(d.Dir(), store.ConfigFile))
		if err != nil {
			return nil, store.Refuse(store.ErrBrokenConfig, "config.yaml does not parse: %v", err)
		}
		text = raw
	}
	return PermissionsDocument(text)
}

// PermissionsDocument renders the `permissions` entry of a config.yaml
// text alone, as a document: the key with its head comment and the section
// with every comment inside it. A text without the entry gives
// "permissions: {}\n".
func PermissionsDocument(config []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(config, &doc); err != nil {
		return nil, store.Refuse(store.ErrBrokenConfig, "config.yaml does not parse: %v", err)
	}
	entry := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if len(doc.Content) > 0 && doc.Content[0].Kind == yaml.MappingNode {
		top := doc.Content[0]
		for i := 0; i+1 < len(top.Content); i += 2 {
			if top.Content[i].Value == "permissions" {
				entry.Content = top.Content[i : i+2]
				break
			}
		}
	} else if len(doc.Content) > 0 && doc.Content[0].Tag != "!!null" {
		return nil, store.Refuse(store.ErrBrokenConfig, "config.yaml does not parse: the top level is not a mapping")
	}
	if len(entry.Content) == 0 {
		return []byte("permissions: {}\n"), nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(entry); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
