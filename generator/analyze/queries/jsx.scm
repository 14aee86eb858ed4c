; JSX component use counts as a call of the component (included by javascript and tsx).
; Lower-case tags are HTML elements, not components.
((jsx_opening_element name: (identifier) @ref.call) (#match? @ref.call "^[A-Z]"))
((jsx_self_closing_element name: (identifier) @ref.call) (#match? @ref.call "^[A-Z]"))
(jsx_opening_element name: (member_expression property: (property_identifier) @ref.call))
(jsx_self_closing_element name: (member_expression property: (property_identifier) @ref.call))
