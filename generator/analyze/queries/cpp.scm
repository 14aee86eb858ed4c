; inherits: c
; C++: the C patterns plus classes, namespaces, member functions and out-of-line method definitions.

(class_specifier name: (type_identifier) @name body: (field_declaration_list) @body) @def.class
; a specialization (`template <> class standard_value<bool>`, `struct formatter<T, Char, enable_if_t<…>>`,
; `struct fmt::formatter<my_type>`): a definition of the template it specializes, named as that template
(class_specifier name: [(template_type name: (type_identifier) @name)
                        (qualified_identifier name: (template_type name: (type_identifier) @name))]
  body: (field_declaration_list) @body) @def.class
(struct_specifier name: [(template_type name: (type_identifier) @name)
                         (qualified_identifier name: (template_type name: (type_identifier) @name))]
  body: (field_declaration_list) @body) @def.struct
(namespace_definition name: (namespace_identifier) @name body: (declaration_list) @body) @def.namespace

;  member functions defined inside a class body (a member's name is a field_identifier), returning a
; value, a pointer or a reference
(function_definition
  declarator: [
    (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(field_identifier) (operator_name)] @name))
  ]
  body: (_) @body) @def.method
; member functions declared inside a class body
(field_declaration
  declarator: [
    (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(field_identifier) (operator_name)] @name))
  ]) @def.method
(field_declaration_list
  (declaration
    declarator: (function_declarator declarator: [(identifier) (destructor_name) (operator_name)] @name)) @def.method)
(field_declaration_list
  (template_declaration
    (declaration
      declarator: [
        (function_declarator declarator: [(identifier) (field_identifier) (operator_name)] @name)
        (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name))
        (reference_declarator (function_declarator declarator: [(identifier) (field_identifier)] @name))
      ]) @def.method))
; a constructor defined in its class (`Foo(int x) : x_(x) {}`): no return type, the name an identifier
(field_declaration_list
  (function_definition
    declarator: (function_declarator declarator: [(identifier) (destructor_name)] @name)) @def.method)

; a defaulted or deleted member (`T& operator=(T&&) = default;`, `logger(const logger&) = delete;`): a
; declaration without a body, which the grammar reads as a definition
(field_declaration_list
  (function_definition
    declarator: [
      (function_declarator declarator: [(field_identifier) (identifier) (destructor_name) (operator_name)] @name)
      (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))
      (reference_declarator (function_declarator declarator: [(field_identifier) (identifier) (operator_name)] @name))
    ]
    [(default_method_clause) (delete_method_clause)]) @def.method)

; out of line and defaulted: `registry::~registry() = default;`
(function_definition
  declarator: (function_declarator declarator: (qualified_identifier) @name)
  [(default_method_clause) (delete_method_clause)]) @def.method

; an explicit specialization of a function template (`template <> auto digits10<int128_opt>() -> int`),
; named as the template
(function_definition
  declarator: [
    (function_declarator declarator: (template_function name: (identifier) @name))
    (pointer_declarator declarator: (function_declarator declarator: (template_function name: (identifier) @name)))
    (reference_declarator (function_declarator declarator: (template_function name: (identifier) @name)))
  ]
  body: (_) @body) @def.function

; conversion operators (`explicit operator bool() const`, `operator basic_string_view<Char>() const`), in a
; class and out of line (`A::operator T() const`): parse.py names them without their parameters
(field_declaration_list (function_definition declarator: (operator_cast) @name body: (_) @body) @def.method)
(field_declaration_list (declaration declarator: (operator_cast) @name) @def.method)
(field_declaration_list (template_declaration
  (function_definition declarator: (operator_cast) @name body: (_) @body) @def.method))
(function_definition declarator: [
  (qualified_identifier name: (operator_cast))
  (qualified_identifier name: (qualified_identifier name: (operator_cast)))] @name body: (_) @body) @def.method

; out of line: `double Square::area() const { ... }`, `ns::Cls<T>::Cls(...)`, `std::string &a::b::name()`:
; the qualified name is captured whole and parse.py splits it (the last name is the method's, the one
; before it the receiver)
(function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier) @name))
    (reference_declarator (function_declarator declarator: (qualified_identifier) @name))
  ]
  body: (_) @body) @def.method

; function templates and prototypes: in a namespace or a template, returning a reference
(template_declaration
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @def.function)
(declaration_list
  (declaration
    declarator: (reference_declarator (function_declarator declarator: (identifier) @name))) @def.function)
(translation_unit
  (declaration
    declarator: (reference_declarator (function_declarator declarator: (identifier) @name))) @def.function)
(function_definition
  declarator: (reference_declarator (function_declarator declarator: [(identifier) (operator_name)] @name))
  body: (compound_statement) @body) @def.function
(function_definition
  declarator: (function_declarator declarator: (operator_name) @name)
  body: (compound_statement) @body) @def.function

; `using Alias = T;`, `template <class T> using Alias = X<T>;`
(alias_declaration name: (type_identifier) @name) @def.type
; a forward-declared or template class without a body is not a definition; `enum class E : int {}` is
(enum_specifier name: (type_identifier) @name body: (enumerator_list) @body) @def.enum

; ---- a class's data members, shown in a table under its section
(class_specifier body: (field_declaration_list (field_declaration declarator: [
  (field_identifier) @name
  (pointer_declarator declarator: (field_identifier) @name)
  (reference_declarator (field_identifier) @name)
  (array_declarator declarator: (field_identifier) @name)
]) @member.field))

(call_expression function: (qualified_identifier name: (identifier) @ref.call))
(base_class_clause (type_identifier) @ref.name)

; ---- bindings: what a name holds, for typed call resolution (contract: see java.scm): typed parameters,
; locals and data members (`T x`, `T* p`, `T& r`, `ns::T<U> x`, `std::unique_ptr<T> p`), `auto x = new T()`,
; `auto x = f()`, a class's bases
(parameter_declaration type: [(type_identifier) (qualified_identifier name: (type_identifier))] @bind.type
  declarator: [(identifier) @bind.name (pointer_declarator declarator: (identifier) @bind.name)
               (reference_declarator (identifier) @bind.name)])
(declaration type: [(type_identifier) (qualified_identifier name: (type_identifier))] @bind.type
  declarator: [(identifier) @bind.name (pointer_declarator declarator: (identifier) @bind.name)
               (reference_declarator (identifier) @bind.name)
               (init_declarator declarator: [(identifier) @bind.name
                                             (pointer_declarator declarator: (identifier) @bind.name)
                                             (reference_declarator (identifier) @bind.name)])])
(field_declaration type: [(type_identifier) (qualified_identifier name: (type_identifier))] @bind.type
  declarator: [(field_identifier) @bind.name (pointer_declarator declarator: (field_identifier) @bind.name)
               (reference_declarator (field_identifier) @bind.name)])
; a template's instance is of the template (`Foo<int> x`: a Foo); a smart pointer points to its argument
((parameter_declaration type: [(template_type name: (type_identifier) @bind.type)
                               (qualified_identifier name: (template_type name: (type_identifier) @bind.type))]
  declarator: [(identifier) @bind.name (pointer_declarator declarator: (identifier) @bind.name)
               (reference_declarator (identifier) @bind.name)])
  (#not-match? @bind.type "^(shared_ptr|unique_ptr|weak_ptr)$"))
((declaration type: [(template_type name: (type_identifier) @bind.type)
                     (qualified_identifier name: (template_type name: (type_identifier) @bind.type))]
  declarator: [(identifier) @bind.name (init_declarator declarator: (identifier) @bind.name)])
  (#not-match? @bind.type "^(shared_ptr|unique_ptr|weak_ptr)$"))
((field_declaration type: [(template_type name: (type_identifier) @bind.type)
                           (qualified_identifier name: (template_type name: (type_identifier) @bind.type))]
  declarator: (field_identifier) @bind.name)
  (#not-match? @bind.type "^(shared_ptr|unique_ptr|weak_ptr)$"))
((parameter_declaration type: (qualified_identifier name: (template_type name: (type_identifier) @_ptr
    arguments: (template_argument_list . (type_descriptor type: [(type_identifier) (qualified_identifier)] @bind.type))))
  declarator: [(identifier) @bind.name (reference_declarator (identifier) @bind.name)])
  (#match? @_ptr "^(shared_ptr|unique_ptr|weak_ptr)$"))
((declaration type: (qualified_identifier name: (template_type name: (type_identifier) @_ptr
    arguments: (template_argument_list . (type_descriptor type: [(type_identifier) (qualified_identifier)] @bind.type))))
  declarator: [(identifier) @bind.name (init_declarator declarator: (identifier) @bind.name)])
  (#match? @_ptr "^(shared_ptr|unique_ptr|weak_ptr)$"))
((field_declaration type: (qualified_identifier name: (template_type name: (type_identifier) @_ptr
    arguments: (template_argument_list . (type_descriptor type: [(type_identifier) (qualified_identifier)] @bind.type))))
  declarator: (field_identifier) @bind.name)
  (#match? @_ptr "^(shared_ptr|unique_ptr|weak_ptr)$"))
(declaration type: (placeholder_type_specifier)
  declarator: (init_declarator declarator: (identifier) @bind.name
                               value: (new_expression type: [(type_identifier) (qualified_identifier)] @bind.type)))
(declaration type: (placeholder_type_specifier)
  declarator: (init_declarator declarator: (identifier) @bind.name
                               value: (call_expression function: [(identifier) (qualified_identifier)] @bind.call)))
(class_specifier name: (type_identifier) @bind.name
  (base_class_clause [(type_identifier) (qualified_identifier name: (type_identifier))] @bind.type))
(struct_specifier name: (type_identifier) @bind.name
  (base_class_clause [(type_identifier) (qualified_identifier name: (type_identifier))] @bind.type))
(class_specifier name: (type_identifier) @bind.name
  (base_class_clause [(template_type name: (type_identifier) @bind.type)
                      (qualified_identifier name: (template_type name: (type_identifier) @bind.type))]))
(struct_specifier name: (type_identifier) @bind.name
  (base_class_clause [(template_type name: (type_identifier) @bind.type)
                      (qualified_identifier name: (template_type name: (type_identifier) @bind.type))]))
; locals of unknown type: they shadow the members of the same name
(parameter_declaration declarator: [(identifier) @bind.local (pointer_declarator declarator: (identifier) @bind.local)
                                    (reference_declarator (identifier) @bind.local)])
(declaration declarator: (init_declarator declarator: (identifier) @bind.local))
