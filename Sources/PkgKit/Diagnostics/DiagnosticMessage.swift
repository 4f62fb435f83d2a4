
/// A diagnostic's message: its text with the hints in it kept typed, so that each program
/// words them its own way (`DiagnosticWording`). Written as a string literal, a hint
/// interpolated with a label: `"split the content or \(hint: .raiseSizeLimit)"`.
public struct DiagnosticMessage: Hashable, Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// A run of text, or a hint.
    package enum Piece: Hashable, Sendable {
        case text(String)
        case hint(DiagnosticHint)
    }

    private var pieces: [Piece]

    /// A message of plain text, with no hint in it.
    public init(_ text: String) {
        pieces = [.text(text)]
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    public init(stringInterpolation: StringInterpolation) {
        pieces = stringInterpolation.pieces
    }

    /// Adds `text` at the end, the hints kept.
    public mutating func append(_ text: String) {
        var interpolation = StringInterpolation(literalCapacity: 0, interpolationCount: 0)
        interpolation.pieces = pieces
        interpolation.appendLiteral(text)
        pieces = interpolation.pieces
    }

    /// The hints in the message, in order.
    public var hints: [DiagnosticHint] {
        pieces.compactMap { if case .hint(let hint) = $0 { hint } else { nil } }
    }

    /// The message with each hint in `wording`'s words.
    public func text(_ wording: DiagnosticWording) -> String {
        pieces.map {
            switch $0 {
            case .text(let text): text
            case .hint(let hint): wording.words(for: hint)
            }
        }.joined()
    }

    /// The message in PkgKit's own words.
    public var description: String { text(.plain) }

    /// Builds a message from a literal: text, values as they print, and labelled hints.
    public struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var pieces: [Piece] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            append(literal)
        }

        public mutating func appendInterpolation<T>(_ value: T) {
            append(String(describing: value))
        }

        /// A hint, worded by the program that shows the message.
        public mutating func appendInterpolation(hint: DiagnosticHint) {
            pieces.append(.hint(hint))
        }

        private mutating func append(_ text: String) {
            guard !text.isEmpty else { return }
            if case .text(let before) = pieces.last {
                pieces[pieces.count - 1] = .text(before + text)
            } else {
                pieces.append(.text(text))
            }
        }
    }
}

/// How a program words the hints in diagnostics: PkgKit's plain words unless it says otherwise.
public struct DiagnosticWording: Sendable {
    private let wording: @Sendable (DiagnosticHint) -> String?

    /// Words each hint with `wording`, or with its plain words where that gives nil.
    public init(_ wording: @escaping @Sendable (DiagnosticHint) -> String?) {
        self.wording = wording
    }

    /// PkgKit's own words, which name no command-line flag.
    public static let plain = DiagnosticWording { _ in nil }

    /// `hint` in this wording.
    public func words(for hint: DiagnosticHint) -> String {
        wording(hint) ?? hint.plainWords
    }

    /// The key under which an encoder's `userInfo` holds the wording that diagnostics encoded
    /// by it use for their `message`; without one, the plain wording.
    public static let userInfoKey = CodingUserInfoKey(rawValue: "PkgKit.DiagnosticWording")!
}
