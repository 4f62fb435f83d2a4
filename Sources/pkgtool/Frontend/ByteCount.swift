import ArgumentParser

/// A byte count as a flag takes it (`--max-size`): a plain number of bytes, or a number with a
/// unit as coreutils reads them: `K`, `M`, `G` and `KiB`, `MiB`, `GiB` are powers of 1024,
/// `KB`, `MB`, `GB` powers of 1000 (case ignored).
enum ByteCount {
    /// The forms, for the message about a value that is none of them.
    static let forms = "give a number of bytes, or a number with a unit: K, M, G, KiB, MiB, GiB (powers of 1024) or KB, MB, GB (powers of 1000), e.g. 500M or 2GB"

    private static let units: [String: Int64] = [
        "": 1,
        "k": 1 << 10, "kib": 1 << 10, "kb": 1000,
        "m": 1 << 20, "mib": 1 << 20, "mb": 1_000_000,
        "g": 1 << 30, "gib": 1 << 30, "gb": 1_000_000_000,
    ]

    /// The number of bytes `text` says; a `ValidationError` naming the forms when it says none
    /// (or more than a signed 64-bit count holds).
    static func parse(_ text: String) throws -> Int64 {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let unit = text.dropFirst(digits.count).lowercased()
        guard !digits.isEmpty, let number = Int64(digits), let scale = units[unit] else {
            throw ValidationError(forms)
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: scale)
        guard !overflow else { throw ValidationError("more bytes than pkgtool can count; \(forms)") }
        return bytes
    }
}
