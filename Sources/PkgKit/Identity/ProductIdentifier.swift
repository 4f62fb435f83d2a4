import PkgKitDiagnostics

/// The rules for an IAPProductIdentifier: 1–255 characters from `A–Z a–z 0–9 _ .`, not starting
/// or ending with `.`, no `..`. It names a folder on install, so nothing else is allowed.
public enum ProductIdentifier {
    /// The longest identifier accepted.
    public static let maximumLength = 255

    /// Why `text` is not a valid identifier, in words for a diagnostic; nil when it is valid.
    public static func problem(with text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return "IAPProductIdentifier is empty: give the product's identifier, like com.example.book.chapter1" }
        if bytes.count > maximumLength { return "IAPProductIdentifier is \(bytes.count) bytes long: use at most \(maximumLength)" }
        if let bad = text.unicodeScalars.first(where: { !isAllowed($0) }) {
            let shown = bad.value < 0x20 || bad.value == 0x7F ? "U+" + String(bad.value, radix: 16, uppercase: true) : String(bad)
            return "IAPProductIdentifier '\(PathDisplay.printable(text))' contains '\(shown)': use only letters A-Z a-z, digits, '_' and '.'"
        }
        if text.hasPrefix(".") || text.hasSuffix(".") {
            return "IAPProductIdentifier '\(text)' starts or ends with '.': remove it"
        }
        if text.contains("..") { return "IAPProductIdentifier '\(text)' contains '..': use single dots" }
        return nil
    }

    /// True when `text` is a valid identifier.
    public static func isValid(_ text: String) -> Bool { problem(with: text) == nil }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", ".": return true
        default: return false
        }
    }
}
