; inherits: c
; C++: the C patterns plus classes, namespaces, member functions and out-of-line method definitions.

(class_specifier name: (type_identifier) @name body: (field_declaration_list) @body) @def.class
(namespace_definition name: (namespace_identifier) @name body: (declaration_list) @body) @def.namespace

; member functions defined or declared inside a class body
(field_declaration_list
  (function_definition
    declarator: (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    body: (_) @body) @def.method)
(field_declaration_list
  (field_declaration
    declarator: (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)) @def.method)
(field_declaration_list
  (declaration
    declarator: (function_declarator declarator: [(identifier) (destructor_name)] @name)) @def.method)

; double Square::area() const { ... }
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: [(namespace_identifier) (type_identifier)] @receiver
      name: [(identifier) (destructor_name) (operator_name)] @name))
  body: (compound_statement) @body) @def.method

(call_expression function: (qualified_identifier name: (identifier) @ref.call))
(base_class_clause (type_identifier) @ref.name)
