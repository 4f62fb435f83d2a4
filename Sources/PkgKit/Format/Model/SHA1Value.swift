import Crypto
import PkgKitSupport

/// A sha1 digest held in its 20 bytes, inline. Every file's facts keep one (an install records
/// them in its stat cache), and as a hex `String` each was a heap object of 80 bytes: 8 MB more
/// for a package of 100,000 files.
package struct SHA1Value: Hashable, Sendable {
    private var high: UInt64
    private var middle: UInt64
    private var low: UInt32

    /// The digest whose bytes these are; nil unless there are exactly 20. Contiguous bytes go
    /// straight to the non-generic reading below: a caller in another module gets this initializer
    /// unspecialized, and a generic call per byte made it a plan's largest cost.
    package init?(bytes: some Sequence<UInt8>) {
        if let parsed = bytes.withContiguousStorageIfAvailable({ SHA1Value(rawBytes: UnsafeRawBufferPointer($0)) }) {
            guard let parsed else { return nil }
            self = parsed
            return
        }
        guard let parsed = Array(bytes).withUnsafeBytes({ SHA1Value(rawBytes: $0) }) else { return nil }
        self = parsed
    }

    /// The digest whose 20 bytes `bytes` are; nil for any other count.
    private init?(rawBytes bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 20 else { return nil }
        var (high, middle, low) = (UInt64(0), UInt64(0), UInt32(0))
        for index in 0..<8 { high = high << 8 | UInt64(bytes[index]) }
        for index in 8..<16 { middle = middle << 8 | UInt64(bytes[index]) }
        for index in 16..<20 { low = low << 8 | UInt32(bytes[index]) }
        (self.high, self.middle, self.low) = (high, middle, low)
    }

    /// A digest just computed.
    package init(_ digest: Insecure.SHA1Digest) {
        // swift-crypto's SHA-1 digest is always 20 bytes.
        self = digest.withUnsafeBytes { SHA1Value(rawBytes: $0)! }
    }

    /// The digest spelled in `hex` (40 hexadecimal digits, either case); nil for anything else.
    package init?(hex: String) {
        var text = hex
        guard let parsed = text.withUTF8({ SHA1Value(hexBytes: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = parsed
    }

    /// The digest spelled in the UTF-8 bytes `units` (40 hexadecimal digits, either case); nil for
    /// anything else.
    package init?<Units: Collection<UInt8>>(hexBytes units: Units) {
        guard let parsed = units.withContiguousStorageIfAvailable({ SHA1Value(hexBytes: UnsafeRawBufferPointer($0)) })
            ?? Array(units).withUnsafeBytes({ SHA1Value(hexBytes: $0) }) else { return nil }
        self = parsed
    }

    /// The digest spelled in the UTF-8 bytes `units`, read in place: a stat cache of 100,000 files
    /// is read without making a String of any digest, and without the generic collection calls a
    /// caller in another module would make per byte.
    package init?(hexBytes units: UnsafeRawBufferPointer) {
        guard units.count == 40 else { return nil }
        var (high, middle, low) = (UInt64(0), UInt64(0), UInt32(0))
        for position in 0..<40 {
            guard let nibble = Self.nibble(units[position]) else { return nil }
            switch position {
            case 0..<16: high = high << 4 | UInt64(nibble)
            case 16..<32: middle = middle << 4 | UInt64(nibble)
            default: low = low << 4 | UInt32(nibble)
            }
        }
        (self.high, self.middle, self.low) = (high, middle, low)
    }

    private static func nibble(_ unit: UInt8) -> UInt8? {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Appends the lowercase hexadecimal spelling (40 bytes of UTF-8) to `output`: a stat cache
    /// spells every file's digest into its buffer without a String each.
    package func appendHex(to output: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { output.appendHex(UInt8(truncatingIfNeeded: high >> UInt64(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { output.appendHex(UInt8(truncatingIfNeeded: middle >> UInt64(shift))) }
        for shift in stride(from: 24, through: 0, by: -8) { output.appendHex(UInt8(truncatingIfNeeded: low >> UInt32(shift))) }
    }

    /// Lowercase hexadecimal, as xar checksums and JSON output spell it.
    package var hexString: String {
        var text: [UInt8] = []
        text.reserveCapacity(40)
        appendHex(to: &text)
        return String(decoding: text, as: UTF8.self)
    }
}
