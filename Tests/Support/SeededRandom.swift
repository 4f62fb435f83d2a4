/// A random number generator that a seed fixes: SplitMix64 (Steele, Lea and Flood), small and
/// good enough for picking faults. Swift's `SystemRandomNumberGenerator` cannot be seeded, and a
/// soak that finds a failure must be able to make the same choices again.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose every output follows from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// An independent generator for one part of the work (a run, a request), fixed by this
    /// generator's seed and `label`: what one part draws does not shift what another draws.
    public func stream(_ label: UInt64) -> SeededRandom {
        var mixer = SeededRandom(seed: state ^ (label &* 0xD1B5_4A32_D192_ED03))
        return SeededRandom(seed: mixer.next())
    }

    /// True with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// One of `choices`, each as likely as its weight.
    public mutating func weighted<T>(_ choices: [(T, Double)]) -> T {
        let total = choices.reduce(0) { $0 + $1.1 }
        var point = Double.random(in: 0..<total, using: &self)
        for (choice, weight) in choices {
            if point < weight { return choice }
            point -= weight
        }
        return choices[choices.count - 1].0
    }
}
