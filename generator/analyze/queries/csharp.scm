; C#: types, members, XML doc comments, using directives. Capture contract: see python.scm.

(class_declaration name: (identifier) @name body: (declaration_list) @body) @def.class
(struct_declaration name: (identifier) @name body: (declaration_list) @body) @def.struct
(interface_declaration name: (identifier) @name body: (declaration_list) @body) @def.interface
(enum_declaration name: (identifier) @name body: (enum_member_declaration_list) @body) @def.enum
(record_declaration name: (identifier) @name) @def.class
(namespace_declaration name: (_) @name body: (declaration_list) @body) @def.namespace
(file_scoped_namespace_declaration name: (_) @name) @def.namespace
(method_declaration name: (identifier) @name body: (_) @body) @def.method
(method_declaration name: (identifier) @name !body) @def.method
(constructor_declaration name: (identifier) @name body: (_) @body) @def.method
(property_declaration name: (identifier) @name) @def.field

(using_directive) @import.module

(invocation_expression function: (identifier) @ref.call)
(invocation_expression function: (member_access_expression name: (identifier) @ref.call))
(object_creation_expression type: (identifier) @ref.call)
(base_list (identifier) @ref.name)
(generic_name (identifier) @ref.name)

; ---- enum members and fields, shown in a table under the type's section
(enum_member_declaration name: (identifier) @name) @member.variant
(declaration_list (field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @member.field)
(declaration_list (event_field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @member.field)

; ---- bindings: what a name holds, for typed call resolution (contract: see java.scm): typed parameters,
; locals, fields and properties, `var x = new T()`, `var x = F()`, declared return types, a type's bases
(parameter type: [(identifier) (qualified_name) (nullable_type [(identifier) (qualified_name)])
                  (generic_name (identifier))] @bind.type name: (identifier) @bind.name)
(variable_declaration type: [(identifier) (qualified_name) (nullable_type [(identifier) (qualified_name)])
                             (generic_name (identifier))] @bind.type
  (variable_declarator name: (identifier) @bind.name))
(variable_declaration type: (implicit_type)
  (variable_declarator name: (identifier) @bind.name
    (object_creation_expression type: [(identifier) (qualified_name) (generic_name (identifier))] @bind.type)))
(variable_declaration type: (implicit_type)
  (variable_declarator name: (identifier) @bind.name
    (invocation_expression function: [(identifier) (member_access_expression)] @bind.call)))
(property_declaration type: [(identifier) (qualified_name) (nullable_type [(identifier) (qualified_name)])
                             (generic_name (identifier))] @bind.type name: (identifier) @bind.name)
(method_declaration returns: [(identifier) (qualified_name) (generic_name (identifier))] @bind.type
  name: (identifier) @bind.returns)
(class_declaration name: (identifier) @bind.name
  (base_list [(identifier) (qualified_name) (generic_name (identifier))] @bind.type))
(struct_declaration name: (identifier) @bind.name
  (base_list [(identifier) (qualified_name) (generic_name (identifier))] @bind.type))
(interface_declaration name: (identifier) @bind.name
  (base_list [(identifier) (qualified_name) (generic_name (identifier))] @bind.type))
(record_declaration name: (identifier) @bind.name
  (base_list [(identifier) (qualified_name) (generic_name (identifier))] @bind.type))
; locals of unknown type: they shadow the members of the same name
(parameter name: (identifier) @bind.local)
(variable_declarator name: (identifier) @bind.local)
