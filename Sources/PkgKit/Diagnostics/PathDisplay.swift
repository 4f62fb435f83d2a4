
/// Shows archive names safely in a terminal: a hostile name must not be able to move the cursor
/// or forge another diagnostic line, so control bytes and invalid UTF-8 are written as `\xNN`.
public enum PathDisplay {
    /// The bytes as printable text.
    public static func printable(_ bytes: [UInt8]) -> String {
        var out = ""
        var index = 0
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                let width = UTF8.width(scalar)
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) {
                    out += hex(bytes[index..<(index + width)])
                } else {
                    out.unicodeScalars.append(scalar)
                }
                index += width
            case .emptyInput:
                return out
            case .error:
                // The decoder consumed at least one byte; show the first one and resume after it.
                out += hex(bytes[index..<(index + 1)])
                index += 1
                iterator = Array(bytes[index...]).makeIterator()
                decoder = UTF8()
            }
        }
    }

    /// Text that may hold control characters, shown the same way.
    public static func printable(_ text: String) -> String { printable(Array(text.utf8)) }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { "\\x" + String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
