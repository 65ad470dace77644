import Foundation

/// A distance as a patient reads it, the unit said: miles in English (the directory is of U.S.
/// clinics, and U.S. users read miles: "4.5 mi", "0.3 mi", "12 mi", "450 ft" under a tenth of
/// a mile), kilometres in Russian with a decimal comma ("7,2 км", "850 м"). The CLI and the web
/// app both write distances with it; JSON keeps metres.
public enum DistanceText {
    public static let metresPerMile = 1609.344, metresPerFoot = 0.3048

    public static func text(_ metres: Double, _ language: Language) -> String {
        let metres = max(0, metres.isFinite ? metres : 0)
        switch language {
        case .en:
            let miles = metres / metresPerMile
            if miles < 0.1 { return String(format: "%.0f ft", (metres / metresPerFoot / 10).rounded() * 10) }
            return miles < 10 ? String(format: "%.1f mi", miles) : String(format: "%.0f mi", miles.rounded())
        case .ru:
            if metres < 1000 { return String(format: "%.0f м", metres.rounded()) }
            return String(format: "%.1f км", metres / 1000).replacingOccurrences(of: ".", with: ",")
        }
    }
}

/// A visit's price as a patient reads it: the directory's clinics are American, so dollars —
/// "$45.00" in English, "45,00 $" in Russian.
public enum PriceText {
    public static func text(cents: Int, _ language: Language) -> String {
        let amount = String(format: "%d.%02d", cents / 100, abs(cents % 100))
        return language == .ru ? amount.replacingOccurrences(of: ".", with: ",") + " $" : "$" + amount
    }
}
