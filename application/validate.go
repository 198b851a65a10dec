package application

import (
	"fmt"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// validateChanges checks an ALTER TABLE request before it reaches the
// cluster, naming the offending request field. Whether an added column's name
// is free is left to the catalog, which knows the current schema.
func validateChanges(changes []domain.TableChange) error {
	if len(changes) == 0 {
		return domain.InvalidArgument("changes: at least one change is required")
	}
	var schema, config int
	for i, ch := range changes {
		field := fmt.Sprintf("changes[%d]", i)
		switch ch.Kind {
		case domain.ChangeAddColumn:
			schema++
			if strings.TrimSpace(ch.Column.Name) == "" {
				return domain.InvalidArgument("%s.name: must not be blank", field)
			}
			if !ch.Column.Type.Nullable {
				return domain.InvalidArgument("%s: an added column must be nullable", field)
			}
			if err := domain.ValidateDataType(ch.Column.Type, field+".data_type"); err != nil {
				return err
			}
		case domain.ChangeSetConfig, domain.ChangeResetConfig:
			// A `table.` key is a Fluss table property, any other key a
			// custom property (Fluss sorts them the same way).
			config++
			if ch.Key == "" {
				return domain.InvalidArgument("%s.key: must not be empty", field)
			}
		default:
			return domain.InvalidArgument("%s: unknown change %q", field, ch.Kind)
		}
	}
	if schema > 0 && config > 0 {
		return domain.InvalidArgument("changes: schema changes (add_column) and config changes (set_config, reset_config) cannot be mixed in one request; send them separately")
	}
	return nil
}

func validateCustomProperties(field string, props map[string]string) error {
	for k := range props {
		if k == "" {
			return domain.InvalidArgument("%s: keys must not be empty", field)
		}
	}
	return nil
}
