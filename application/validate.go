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
	for i, ch := range changes {
		field := fmt.Sprintf("changes[%d]", i)
		switch ch.Kind {
		case domain.ChangeAddColumn:
			if strings.TrimSpace(ch.Column.Name) == "" {
				return domain.InvalidArgument("%s.add_column.name: must not be blank", field)
			}
			if !ch.Column.Type.Nullable {
				return domain.InvalidArgument("%s.add_column.nullable: an added column must be nullable", field)
			}
			if err := domain.ValidateDataType(ch.Column.Type, field+".add_column.data_type"); err != nil {
				return err
			}
		case domain.ChangeSetConfig, domain.ChangeResetConfig:
			if !strings.HasPrefix(ch.Key, domain.TablePropertyPrefix) {
				return domain.InvalidArgument("%s.%s.key: table options start with %q", field, ch.Kind, domain.TablePropertyPrefix)
			}
		default:
			return domain.InvalidArgument("%s: unknown change %q", field, ch.Kind)
		}
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
