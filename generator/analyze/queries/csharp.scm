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
