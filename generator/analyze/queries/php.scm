; PHP: functions, classes, interfaces, traits, enums, methods, use and include. Contract: see python.scm.

(function_definition name: (name) @name body: (compound_statement) @body) @def.function
(class_declaration name: (name) @name body: (declaration_list) @body) @def.class
(interface_declaration name: (name) @name body: (declaration_list) @body) @def.interface
(trait_declaration name: (name) @name body: (declaration_list) @body) @def.trait
(enum_declaration name: (name) @name body: (enum_declaration_list) @body) @def.enum
(method_declaration name: (name) @name body: (compound_statement) @body) @def.method
(method_declaration name: (name) @name !body) @def.method
(const_declaration (const_element (name) @name)) @def.constant

(namespace_use_declaration (namespace_use_clause [(qualified_name) (name)] @import.module)) @import
(namespace_use_declaration
  (namespace_name) @import.module
  body: (namespace_use_group (namespace_use_clause . (name) @import.name))) @import
([(include_expression) (include_once_expression) (require_expression) (require_once_expression)]
  (string (string_content) @import.module)) @import

(function_call_expression function: (name) @ref.call)
(function_call_expression function: (qualified_name (name) @ref.call .))
(member_call_expression name: (name) @ref.call)
(scoped_call_expression name: (name) @ref.call)
(scoped_call_expression scope: (name) @ref.name)
(object_creation_expression (name) @ref.call)
(base_clause (name) @ref.name)
(class_interface_clause (name) @ref.name)
(named_type (name) @ref.name)

; ---- enum cases and properties, shown in a table under the type's section
(enum_case name: (name) @name) @member.variant
(property_declaration (property_element (variable_name (name) @name))) @member.field
; a constructor's promoted parameters (`public function __construct(private Store $store)`): its class's
(property_promotion_parameter name: (variable_name (name) @name)) @member.field

; ---- bindings: what a name holds, for typed call resolution (contract: see java.scm): typed parameters
; and properties, `$x = new T()`, `$this->x = new T()`, declared return types, a class's bases and traits
(simple_parameter type: (named_type [(name) (qualified_name)] @bind.type) name: (variable_name) @bind.name)
(simple_parameter type: (optional_type (named_type [(name) (qualified_name)] @bind.type))
  name: (variable_name) @bind.name)
(property_promotion_parameter type: (named_type [(name) (qualified_name)] @bind.type)
  name: (variable_name) @bind.name)
(property_promotion_parameter type: (optional_type (named_type [(name) (qualified_name)] @bind.type))
  name: (variable_name) @bind.name)
(property_declaration type: (named_type [(name) (qualified_name)] @bind.type)
  (property_element name: (variable_name) @bind.name))
(property_declaration type: (optional_type (named_type [(name) (qualified_name)] @bind.type))
  (property_element name: (variable_name) @bind.name))
(assignment_expression left: [(variable_name) (member_access_expression)] @bind.name
  right: (object_creation_expression [(name) (qualified_name)] @bind.type))
(method_declaration name: (name) @bind.returns return_type: (named_type [(name) (qualified_name)] @bind.type))
(method_declaration name: (name) @bind.returns
  return_type: (optional_type (named_type [(name) (qualified_name)] @bind.type)))
(class_declaration name: (name) @bind.name (base_clause [(name) (qualified_name)] @bind.type))
(class_declaration name: (name) @bind.name (class_interface_clause [(name) (qualified_name)] @bind.type))
(interface_declaration name: (name) @bind.name (base_clause [(name) (qualified_name)] @bind.type))
(class_declaration name: (name) @bind.name body: (declaration_list (use_declaration [(name) (qualified_name)] @bind.type)))
(trait_declaration name: (name) @bind.name body: (declaration_list (use_declaration [(name) (qualified_name)] @bind.type)))
