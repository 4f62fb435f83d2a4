/// Text with some of its characters written otherwise, for the formats CI reporters print in:
/// one pass over the Unicode scalars, a table of replacements, the rest kept.
enum ScalarEscaping {
    /// `text` with each scalar found in `replacements` replaced, and each one `other` gives a
    /// spelling for written that way.
    static func escaped(_ text: String, _ replacements: [Unicode.Scalar: String],
                        other: (Unicode.Scalar) -> String? = { _ in nil }) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if let replacement = replacements[scalar] ?? other(scalar) {
                out += replacement
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
