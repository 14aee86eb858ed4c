; inherits: ecma, jsx
; JavaScript: the shared ECMAScript and JSX patterns, plus base classes (TypeScript nests them differently).
(class_heritage (identifier) @ref.name)
(class_heritage (member_expression property: (property_identifier) @ref.name))

; class fields holding arrow functions (handlers bound to the instance)
(field_definition
  property: (property_identifier) @name
  value: (arrow_function body: (_) @body)) @def.method
(formal_parameters (identifier) @bind.local)
(class_declaration name: (identifier) @bind.name (class_heritage (identifier) @bind.type))
