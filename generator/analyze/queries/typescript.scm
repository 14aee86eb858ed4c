; inherits: ecma
; TypeScript: the shared ECMAScript patterns plus types, interfaces, enums and namespaces.

(abstract_class_declaration
  name: (type_identifier) @name
  body: (class_body) @body) @def.class

(interface_declaration
  name: (type_identifier) @name
  body: (interface_body) @body) @def.interface

(type_alias_declaration
  name: (type_identifier) @name) @def.type

(enum_declaration
  name: (identifier) @name
  body: (enum_body) @body) @def.enum

(internal_module
  name: [(identifier) (nested_identifier)] @name
  body: (statement_block) @body) @def.namespace

; `export const create = ((s) => ...) as Create`, `export const f = <T>(x: T) => x satisfies F`
(variable_declarator
  name: (identifier) @name
  value: [
    (as_expression [(arrow_function body: (_) @body) (function_expression body: (_) @body)
                    (parenthesized_expression [(arrow_function body: (_) @body) (function_expression body: (_) @body)])])
    (satisfies_expression [(arrow_function body: (_) @body) (function_expression body: (_) @body)])
  ]) @def.function

(module
  name: (string (string_fragment) @name)
  body: (statement_block) @body) @def.namespace

(public_field_definition
  name: (property_identifier) @name
  value: (arrow_function body: (_) @body)) @def.method

(method_signature name: (property_identifier) @name) @def.method
(abstract_method_signature name: (property_identifier) @name) @def.method
(function_signature name: (identifier) @name) @def.function

; import fs = require("fs")
(import_statement
  (import_require_clause source: (string (string_fragment) @import.module))) @import

; types used
(extends_clause value: (identifier) @ref.name)
(extends_clause value: (member_expression property: (property_identifier) @ref.name))
(type_annotation (type_identifier) @ref.name)
(generic_type name: (type_identifier) @ref.name)
(type_arguments (type_identifier) @ref.name)
(extends_type_clause type: (type_identifier) @ref.name)
(implements_clause (type_identifier) @ref.name)
(implements_clause (generic_type name: (type_identifier) @ref.name))
(union_type (type_identifier) @ref.name)
(array_type (type_identifier) @ref.name)

; ---- bindings: typed parameters, variables and fields, declared results, bases, type parameters
(required_parameter pattern: (identifier) @bind.name
  type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(optional_parameter pattern: (identifier) @bind.name
  type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(variable_declarator name: (identifier) @bind.name
  type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(public_field_definition name: (property_identifier) @bind.name
  type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(method_definition name: (property_identifier) @bind.returns
  return_type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(function_declaration name: (identifier) @bind.returns
  return_type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(class_declaration name: (type_identifier) @bind.name
  (class_heritage (extends_clause value: [(identifier) (member_expression)] @bind.type)))
(required_parameter pattern: (identifier) @bind.local)
(optional_parameter pattern: (identifier) @bind.local)
(type_parameter name: (type_identifier) @bind.local)

; ---- enum members, interface properties and class fields, shown in a table under the type's section
(enum_body (property_identifier) @name @member.variant)
(enum_body (enum_assignment name: (property_identifier) @name) @member.variant)
(interface_body (property_signature name: (property_identifier) @name) @member.field)
(object_type (property_signature name: (property_identifier) @name) @member.field)
(class_body (public_field_definition name: (property_identifier) @name) @member.field)
; a constructor's parameter properties (`constructor(private readonly store: Store)`): its class's fields
([(required_parameter (accessibility_modifier) pattern: (identifier) @name)
  (optional_parameter (accessibility_modifier) pattern: (identifier) @name)
  (required_parameter "readonly" pattern: (identifier) @name)
  (optional_parameter "readonly" pattern: (identifier) @name)] @member.field)
