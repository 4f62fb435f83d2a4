import ArgumentParser
import PkgKit

extension Pkgtool {
    /// `pkgtool extract` (being written).
    struct Extract: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Install a package into a Documents folder.")
        @Argument var package: String
        func run() throws { throw ExitCode(2) }
    }
}
