/// A sha1 digest held in its 20 bytes, inline. Every file's facts keep one (an install records
/// them in its stat cache), and as a hex `String` each was a heap object of 80 bytes: 8 MB more
/// for a package of 100,000 files.
struct SHA1Value: Hashable, Sendable {
    private var high: UInt64
    private var middle: UInt64
    private var low: UInt32

    /// The digest whose bytes these are; nil unless there are exactly 20.
    init?(bytes: some Sequence<UInt8>) {
        var (high, middle, low, count) = (UInt64(0), UInt64(0), UInt32(0), 0)
        for byte in bytes {
            switch count {
            case 0..<8: high = high << 8 | UInt64(byte)
            case 8..<16: middle = middle << 8 | UInt64(byte)
            case 16..<20: low = low << 8 | UInt32(byte)
            default: return nil
            }
            count += 1
        }
        guard count == 20 else { return nil }
        (self.high, self.middle, self.low) = (high, middle, low)
    }

    /// The digest spelled in `hex` (40 hexadecimal digits, either case); nil for anything else.
    init?(hex: String) {
        var text = hex
        let parsed = text.withUTF8 { units -> SHA1Value? in
            guard units.count == 40 else { return nil }
            var valid = true
            let value = SHA1Value(bytes: (0..<20).lazy.map { index -> UInt8 in
                guard let high = Self.nibble(units[2 * index]), let low = Self.nibble(units[2 * index + 1]) else {
                    valid = false
                    return 0
                }
                return high << 4 | low
            })
            return valid ? value : nil
        }
        guard let parsed else { return nil }
        self = parsed
    }

    private static func nibble(_ unit: UInt8) -> UInt8? {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Lowercase hexadecimal, as xar checksums and JSON output spell it.
    var hexString: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: middle >> UInt64(shift))) }
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: low >> UInt32(shift))) }
        return bytes.hexString
    }
}
