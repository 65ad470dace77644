import Foundation

/// Reads coordinates the way people write them (the UML's `parseCoordinates(from:)`):
/// `53.9,27.56`, `53.9, 27.56`, `53.9 27.56`, `-13.8 -171.8`, `53.9N 27.56E`, `N53.9 E27.56`,
/// `53.9° N, 27.56° E`, `27.56E 53.9N`. Latitude comes first unless hemisphere letters say
/// otherwise. NaN, infinities, values out of ±90 / ±180 and anything else are `invalid_input`.
public enum CoordinateParser {
    public static func parse(_ text: String) throws -> Coordinate {
        let invalid = ClinicError.invalid(.coordinatesInvalid, text)
        var cleaned = text.replacingOccurrences(of: "°", with: " ").trimmingCharacters(in: .whitespaces)
        // "53.9 N 27.56 E": a hemisphere letter standing alone after a number belongs to it.
        cleaned = cleaned.replacingOccurrences(of: #"([0-9]) +([NSEWnsew])(?=$|[ ,])"#, with: "$1$2", options: .regularExpression)
        guard cleaned.count <= 80 else { throw invalid }
        var tokens = cleaned.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if tokens.count == 1 { tokens = cleaned.split(separator: " ").map(String.init) }
        // "53.9 N, 27.56 E": a lone hemisphere letter belongs to the number before it.
        tokens = tokens.flatMap { token -> [String] in
            let words = token.split(separator: " ").map(String.init)
            if words.count == 2, words[1].count == 1 || words[0].count == 1 { return [words.joined()] }
            return [token]
        }
        guard tokens.count == 2 else { throw invalid }
        let first = try axis(tokens[0], text), second = try axis(tokens[1], text)
        let latitude: Double, longitude: Double
        switch (first.kind, second.kind) {
        case (.none, .none), (.latitude, .longitude), (.latitude, .none), (.none, .longitude):
            latitude = first.value; longitude = second.value
        case (.longitude, .latitude), (.longitude, .none), (.none, .latitude):
            latitude = second.value; longitude = first.value
        default:
            throw invalid
        }
        guard let coordinate = Coordinate(latitude: latitude, longitude: longitude) else {
            throw ClinicError.invalid(.coordinatesOutOfRange, text)
        }
        return coordinate
    }

    /// Two separate fields (`--lat`, `--lon`): a hemisphere letter must fit its field.
    public static func parse(latitude: String, longitude: String) throws -> Coordinate {
        let text = latitude + ", " + longitude
        let lat = try axis(latitude.trimmingCharacters(in: .whitespaces), text)
        let lon = try axis(longitude.trimmingCharacters(in: .whitespaces), text)
        guard lat.kind != .longitude, lon.kind != .latitude else { throw ClinicError.invalid(.coordinatesInvalid, text) }
        guard let coordinate = Coordinate(latitude: lat.value, longitude: lon.value) else {
            throw ClinicError.invalid(.coordinatesOutOfRange, text)
        }
        return coordinate
    }

    enum Kind { case none, latitude, longitude }


    static func axis(_ token: String, _ text: String) throws -> (value: Double, kind: Kind) {
        var body = Substring(token)
        var hemisphere: Character?
        if let last = body.last, "NSEWnsew".contains(last) { hemisphere = last; body = body.dropLast() }
        else if let first = body.first, "NSEWnsew".contains(first) { hemisphere = first; body = body.dropFirst() }
        body = body.drop(while: { $0 == " " })
        guard var value = Text.decimal(body) else { throw ClinicError.invalid(.coordinatesInvalid, text) }
        guard let hemisphere else { return (value, .none) }
        guard !body.hasPrefix("-"), !body.hasPrefix("+") else { throw ClinicError.invalid(.coordinatesInvalid, text) }
        switch hemisphere.uppercased() {
        case "S": value = -value; return (value, .latitude)
        case "N": return (value, .latitude)
        case "W": value = -value; return (value, .longitude)
        default: return (value, .longitude)
        }
    }
}
