; Java: definitions, imports and references. Capture contract: see python.scm.

; ---- definitions
(class_declaration name: (identifier) @name body: (class_body) @body) @def.class
(record_declaration name: (identifier) @name body: (class_body) @body) @def.class
(interface_declaration name: (identifier) @name body: (interface_body) @body) @def.interface
(annotation_type_declaration name: (identifier) @name body: (annotation_type_body) @body) @def.interface
(enum_declaration name: (identifier) @name body: (enum_body) @body) @def.enum
(method_declaration name: (identifier) @name body: (block) @body) @def.method
(method_declaration name: (identifier) @name !body) @def.method
(constructor_declaration name: (identifier) @name body: (constructor_body) @body) @def.method
(compact_constructor_declaration name: (identifier) @name body: (block) @body) @def.method
((field_declaration
   declarator: (variable_declarator name: (identifier) @name)) @def.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
((constant_declaration
   declarator: (variable_declarator name: (identifier) @name)) @def.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

; ---- imports: the whole declaration, normalised to "com.x.Y" / "com.x.*"
(import_declaration) @import.module

; ---- references
(method_invocation name: (identifier) @ref.call)
(method_invocation object: (identifier) @ref.name)
(object_creation_expression type: (type_identifier) @ref.call)
(object_creation_expression type: (generic_type (type_identifier) @ref.call))
(object_creation_expression type: (scoped_type_identifier (type_identifier) @ref.call .))
(type_identifier) @ref.name
(marker_annotation name: (identifier) @ref.name)
(annotation name: (identifier) @ref.name)
(argument_list (identifier) @ref.name)

; ---- bindings: the type a name holds (parameters, locals, fields, `for (T x : ..)`), what a method
; declares it returns, and a class's bases (bound to the class's own name), for typed call resolution
(formal_parameter
  type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
         (generic_type [(type_identifier) (scoped_type_identifier)] @bind.type)]
  name: (identifier) @bind.name)
(local_variable_declaration
  type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
         (generic_type [(type_identifier) (scoped_type_identifier)] @bind.type)]
  declarator: (variable_declarator name: (identifier) @bind.name))
(field_declaration
  type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
         (generic_type [(type_identifier) (scoped_type_identifier)] @bind.type)]
  declarator: (variable_declarator name: (identifier) @bind.name))
(enhanced_for_statement
  type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
         (generic_type [(type_identifier) (scoped_type_identifier)] @bind.type)]
  name: (identifier) @bind.name)
(method_declaration
  type: [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
         (generic_type [(type_identifier) (scoped_type_identifier)] @bind.type)]
  name: (identifier) @bind.returns)
(class_declaration name: (identifier) @bind.name
  superclass: (superclass [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
                           (generic_type [(type_identifier) (scoped_type_identifier)] @bind.type)]))
(class_declaration name: (identifier) @bind.name
  interfaces: (super_interfaces (type_list [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
                           (generic_type [(type_identifier) (scoped_type_identifier)] @bind.type)])))
(interface_declaration name: (identifier) @bind.name
  (extends_interfaces (type_list [(type_identifier) @bind.type (scoped_type_identifier) @bind.type
                           (generic_type [(type_identifier) (scoped_type_identifier)] @bind.type)])))
; locals of unknown type and type parameters: they shadow the names of the same spelling
(formal_parameter name: (identifier) @bind.local)
(local_variable_declaration declarator: (variable_declarator name: (identifier) @bind.local))
(lambda_expression parameters: (identifier) @bind.local)
(inferred_parameters (identifier) @bind.local)
(catch_formal_parameter name: (identifier) @bind.local)
(enhanced_for_statement name: (identifier) @bind.local)
(type_parameter (type_identifier) @bind.local)

; ---- enum constants, record components and fields, shown in a table under the type's section
(enum_body (enum_constant name: (identifier) @name) @member.variant)
(record_declaration parameters: (formal_parameters (formal_parameter name: (identifier) @name) @member.field))
(class_body (field_declaration declarator: (variable_declarator name: (identifier) @name)) @member.field)
; an enum's fields after its constants, and an interface's constants (implicitly public static final)
(enum_body_declarations (field_declaration declarator: (variable_declarator name: (identifier) @name)) @member.field)
(interface_body (constant_declaration declarator: (variable_declarator name: (identifier) @name)) @member.field)
