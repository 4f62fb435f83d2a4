extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal, as xar checksums and JSON output use.
    public var hexString: String {
        var text = ""
        for byte in self {
            text.append(Self.hexDigits[Int(byte >> 4)])
            text.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        return text
    }

    private static var hexDigits: [Character] { Array("0123456789abcdef") }
}
