import Foundation

/// Sizes as people read them, in powers of 1000 as disk makers and `df -H` count: `512 B`,
/// `41 kB`, `3.2 MB`, `1.50 GB`. Every text output and every message that gives a size of 1 MB
/// or more says it this way too; JSON keeps plain byte counts.
package enum ByteSize {
    /// Below this a count reads well as it is.
    static let humanFrom: Int64 = 1_000_000

    /// `count` in the largest unit that keeps it at 1 or more.
    package static func human(_ count: Int64) -> String {
        switch count {
        case ..<1000: return "\(count) B"
        case ..<1_000_000: return "\(Int((Double(count) / 1000).rounded())) kB"
        case ..<1_000_000_000: return String(format: "%.1f MB", Double(count) / 1e6)
        default: return String(format: "%.2f GB", Double(count) / 1e9)
        }
    }

    /// `102464448 bytes (102.5 MB)`, or `2331 bytes` below a megabyte: the exact count for a
    /// script, the human one for a person.
    package static func counted(_ count: Int64) -> String {
        let bytes = count == 1 ? "1 byte" : "\(count) bytes"
        return count >= humanFrom ? "\(bytes) (\(human(count)))" : bytes
    }
}
