; inherits: typescript, jsx
; TSX is TypeScript with JSX.
