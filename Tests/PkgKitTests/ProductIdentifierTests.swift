import Testing
@testable import PkgKit

@Suite struct ProductIdentifierTests {
    @Test(arguments: ["com.example.book.chapter1", "a", "A_b.C9", "_", "x.y_z", String(repeating: "a", count: 255),
                      "a." + String(repeating: "b", count: 253)])
    func validIdentifiers(_ id: String) {
        #expect(ProductIdentifier.isValid(id))
        #expect(ProductIdentifier.problem(with: id) == nil)
    }

    @Test(arguments: ["", String(repeating: "a", count: 256), "a/b", "a..b", "..", ".", ".a", "a.", "a b", " a", "a-b",
                      "caf\u{E9}", "日本", "a\u{0}b", "a\nb", "a\\b", "a:b", "a\u{301}", "com.example.*", "a\u{FF0E}b"])
    func invalidIdentifiers(_ id: String) {
        #expect(!ProductIdentifier.isValid(id))
        #expect(ProductIdentifier.problem(with: id) != nil)
    }

    @Test func lengthIsCountedInCharactersAtTheBoundary() {
        #expect(ProductIdentifier.isValid(String(repeating: "x", count: 255)))
        #expect(!ProductIdentifier.isValid(String(repeating: "x", count: 256)))
    }

    @Test func problemMessagesAreSingleLine() {
        for id in ["a\nb", "a\u{1B}[2Jb", "a\rb"] {
            let problem = ProductIdentifier.problem(with: id) ?? ""
            #expect(!problem.contains("\n"))
            #expect(!problem.contains("\r"))
            #expect(!problem.contains("\u{1B}"))
        }
    }
}
