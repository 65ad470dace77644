import ClinicKit
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// The web app's templates and static files, read once when the server starts from the
/// project's `Web/` folder (found with `Data/` and `Migrations/`), and the base map from
/// `Data/basemap.geojson.gz`. Nothing is read from disk per request, and no request path
/// reaches the file system.
struct WebAssets: Sendable {
    let library: MustacheLibrary
    /// Every static file by its request path: each at `/static/NAME` and at its fingerprinted
    /// path `/static/NAME-HASH.EXT`, the one pages link to.
    let files: [String: StaticFile]
    /// The fingerprinted path of each file, by the template key `asset.KEY` (`Names.key`).
    let paths: [String: String]

    /// A static file in memory: identity and (when it saves bytes) gzip, its validator, and
    /// whether its path names its content (then it never changes: cached a year, immutable).
    struct StaticFile: Sendable {
        let type: String
        let body: ByteBuffer
        let gzipped: ByteBuffer?
        let etag: String
        let fingerprinted: Bool
    }

    static func load(root: URL) throws -> WebAssets {
        let web = root.appendingPathComponent("Web", isDirectory: true)
        var library = MustacheLibrary()
        let templates = web.appendingPathComponent("templates", isDirectory: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: templates.path) where name.hasSuffix(".mustache") {
            let text = try String(contentsOf: templates.appendingPathComponent(name), encoding: .utf8)
            try library.register(text, named: String(name.dropLast(".mustache".count)))
        }
        var contents: [(path: String, type: String, bytes: [UInt8])] = []
        let types = ["css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "png": "image/png",
                     "svg": "image/svg+xml", "txt": "text/plain; charset=utf-8", "json": "application/json"]
        let staticFolder = web.appendingPathComponent("static", isDirectory: true)
        if let walker = FileManager.default.enumerator(atPath: staticFolder.path) {
            for case let relative as String in walker {
                let url = staticFolder.appendingPathComponent(relative)
                guard let type = types[url.pathExtension.lowercased()], let data = FileManager.default.contents(atPath: url.path)
                else { continue }
                contents.append(("/static/" + relative, type, [UInt8](data)))
            }
        }
        // The base map is kept compressed; the few clients that refuse gzip get it inflated.
        let basemap = root.appendingPathComponent("Data/basemap.geojson.gz")
        var files: [String: StaticFile] = [:], paths: [String: String] = [:]
        /// A file at its path and its fingerprinted path; `packed`: its gzip as kept on disk.
        func add(_ path: String, _ type: String, _ bytes: [UInt8], packed: [UInt8]? = nil) -> String {
            let hash = SHA256.hash(data: bytes).prefix(8).map { String(format: "%02x", $0) }.joined()
            let compressible = !type.hasPrefix("image/png")
            let gzipped = packed.map { ByteBuffer(bytes: $0) }
                ?? (compressible ? Gzip.compress(bytes).flatMap { $0.count < bytes.count ? ByteBuffer(bytes: $0) : nil } : nil)
            let body = ByteBuffer(bytes: bytes), etag = "\"\(hash)\""
            let fingerprinted = Names.fingerprinted(path, hash: hash)
            files[path] = StaticFile(type: type, body: body, gzipped: gzipped, etag: etag, fingerprinted: false)
            files[fingerprinted] = StaticFile(type: type, body: body, gzipped: gzipped, etag: etag, fingerprinted: true)
            paths[Names.key(path)] = fingerprinted
            return fingerprinted
        }
        for (path, type, bytes) in contents { _ = add(path, type, bytes) }
        if let data = FileManager.default.contents(atPath: basemap.path), let inflated = Gzip.decompress([UInt8](data)) {
            _ = add("/static/basemap.geojson", "application/geo+json", inflated, packed: [UInt8](data))
        }
        // The map's detail at city zoom, one file per state (`Data/basemap-detail/ST.geojson.gz`,
        // scripts/derive-basemap-detail.py), and their index: each state's box and address.
        let detail = root.appendingPathComponent("Data/basemap-detail", isDirectory: true)
        var index: [[String: Any]] = []
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: detail.path)) ?? []).sorted() where name.hasSuffix(".geojson.gz") {
            // The box is the collection's first member (the script writes it so): read from the head.
            guard let data = FileManager.default.contents(atPath: detail.appendingPathComponent(name).path),
                  let inflated = Gzip.decompress([UInt8](data)),
                  let head = String(bytes: inflated.prefix(200), encoding: .utf8)?.firstMatch(of: #/"bbox":\[([-0-9.,]+)\]/#)
            else { continue }
            let box = head.output.1.split(separator: ",").compactMap { Double($0) }
            guard box.count == 4 else { continue }
            let state = String(name.dropLast(".geojson.gz".count))
            var entry: [String: Any] = ["state": state, "bbox": box,
                                        "url": add("/static/basemap/\(state).geojson", "application/geo+json", inflated, packed: [UInt8](data))]
            // Its water (lake shores, major rivers; LGPL-3+, so a file of its own) when there is one.
            let waterPath = root.appendingPathComponent("Data/basemap-water/\(name)").path
            if let packed = FileManager.default.contents(atPath: waterPath), let water = Gzip.decompress([UInt8](packed)) {
                entry["water"] = add("/static/basemap/\(state)-water.geojson", "application/geo+json", water, packed: [UInt8](packed))
            }
            index.append(entry)
        }
        if let json = try? JSONSerialization.data(withJSONObject: ["states": index], options: [.sortedKeys]) {
            _ = add("/static/basemap/index.json", "application/json", [UInt8](json))
        }
        return WebAssets(library: library, files: files, paths: paths)
    }

    /// How a static file is named to pages: `/static/vendor/leaflet/leaflet.js` is
    /// `asset.vendorLeafletLeafletJs` in a template and `/static/vendor/leaflet/leaflet-HASH.js` on the wire.
    enum Names {
        static func key(_ path: String) -> String {
            let words = path.dropFirst("/static/".count).split { !$0.isLetter && !$0.isNumber }.map(String.init)
            return words.enumerated().map { index, word in
                index == 0 ? word.prefix(1).lowercased() + word.dropFirst() : word.prefix(1).uppercased() + word.dropFirst()
            }.joined()
        }

        static func fingerprinted(_ path: String, hash: String) -> String {
            guard let dot = path.lastIndex(of: "."), let slash = path.lastIndex(of: "/"), dot > slash else { return path + "-" + hash }
            return String(path[..<dot]) + "-" + hash + String(path[dot...])
        }
    }
}

/// A request of the web app: its cookies, language, CSRF token and signed-in patient.
struct WebRequest: Sendable {
    let cookies: [String: String]
    let language: Language
    /// The forms' token: an HMAC, under the server's secret, of what the browser holds: its
    /// session (a patient's, else a staff member's) or, before any log-in, the `clinic_csrf`
    /// cookie's random value. A token made up with a cookie to match is refused, and a log-in
    /// (a new session) gives a new one.
    var csrf: String
    /// The `clinic_csrf` cookie's value, and whether it is new (to be set on the response).
    let csrfNonce: String
    let newCSRF: Bool
    /// Whether `csrf` is tied to a session rather than to the cookie alone.
    let csrfBound: Bool
    /// Set when the language was chosen by `?lang=`.
    let chosenLanguage: Language?
    var patient: Client?
    var sessionToken: String?
    /// The signed-in patient's unread messages, for the menu.
    var unread = 0
    /// The site's address as others reach it (`ServerDependencies.publicBase`): a calendar feed's.
    var publicBase = ""
    /// The signed-in staff member of a staff page, set for its error page (`WebStaffSession`):
    /// a refusal then shows the staff's header, as their other pages do.
    var staff: StaffMember?

    static func cookies(_ request: Request) -> [String: String] {
        var result: [String: String] = [:]
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                result[parts[0].trimmingCharacters(in: .whitespaces)] = parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return result
    }
}

extension ServerDependencies {
    static let sessionCookie = "clinic_session", csrfCookie = "clinic_csrf", languageCookie = "clinic_lang", staffCookie = "clinic_staff"
    /// No inline script or style, nothing from elsewhere: the map's data and tiles are ours.
    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// The pages' CSP: `contentSecurityPolicy`, with the street tiles' host among the images'
    /// sources when an operator set `CLINIC_TILE_URL` (and only then).
    var contentSecurityPolicy: String {
        guard let origin = settings.tileOrigin else { return Self.contentSecurityPolicy }
        return Self.contentSecurityPolicy.replacingOccurrences(of: "img-src 'self' data:;", with: "img-src 'self' data: \(origin);")
    }

    /// The web request: language (`?lang=`, the cookie, the patient's, `Accept-Language`), the
    /// CSRF cookie, and the patient of the session cookie (none when it has ended).
    func webRequest(_ request: Request) async -> WebRequest {
        let cookies = WebRequest.cookies(request)
        let chosen = request.query("lang").flatMap(Language.init(rawValue:))
        var patient: Client?
        var unread = 0
        let token = cookies[Self.sessionCookie].flatMap { $0.count == 64 ? $0 : nil }
        if let token, let client = try? await system.clients.signedInPatient(token: token),
           let count = try? await system.clients.unreadCount(clientId: client.id ?? 0) as Int {
            patient = client
            unread = count
            // A page is a use of the session, as an API request is (at most a write a minute).
            await touch(token: token) { [system] in try await system.clients.touchSession(token: token) }
        }
        let asked = language(of: request)
        // The header's language link, signed in: the profile's language too, so that the inbox
        // and the e-mails written from now on are in the language of the screens. Only from our
        // own pages or an address typed (`Sec-Fetch-Site`): a GET that writes must not be one
        // another site can make a signed-in patient's browser send with a link.
        let site = HTTPField.Name("Sec-Fetch-Site").flatMap { request.headers[$0] }?.lowercased()
        let fromHere = site == "same-origin" || site == "none"
        if fromHere, let chosen, let client = patient, client.language != chosen, let id = client.id,
           let updated = try? await system.clients.updateProfile(clientId: id, ProfileChanges(language: chosen)) {
            patient = updated
        }
        let chosenLanguage = chosen ?? cookies[Self.languageCookie].flatMap(Language.init(rawValue:)) ?? patient?.language ?? asked
        let existing = cookies[Self.csrfCookie].flatMap { $0.count == 64 && $0.allSatisfy(\.isHexDigit) ? $0 : nil }
        let nonce = existing ?? SessionManager.newToken()
        let session = patient == nil ? nil : token
        let staff = cookies[Self.staffCookie].flatMap { $0.count == 64 ? $0 : nil }
        let binding = session ?? staff
        return WebRequest(cookies: cookies, language: chosenLanguage, csrf: csrfToken(binding.map { "session:" + $0 } ?? "nonce:" + nonce),
                          csrfNonce: nonce, newCSRF: existing == nil, csrfBound: binding != nil, chosenLanguage: chosen,
                          patient: patient, sessionToken: session, unread: unread)
    }

    /// HMAC-SHA256 of what the token is tied to, hex.
    func csrfToken(_ binding: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(binding.utf8), using: csrfKey).hexString
    }

    /// A cookie for the whole site: `HttpOnly`, `SameSite=Lax`, `Secure` under TLS.
    func cookie(_ name: String, _ value: String, maxAge: Int? = nil) -> String {
        var text = "\(name)=\(value); Path=/; HttpOnly; SameSite=Lax"
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        if settings.tls != nil { text += "; Secure" }
        return text
    }

    func cookieHeaders(_ web: WebRequest) -> [String] {
        var cookies: [String] = []
        if web.newCSRF { cookies.append(cookie(Self.csrfCookie, web.csrfNonce)) }
        if let chosen = web.chosenLanguage { cookies.append(cookie(Self.languageCookie, chosen.rawValue, maxAge: 31_536_000)) }
        if web.sessionToken == nil, web.cookies[Self.sessionCookie] != nil { cookies.append(cookie(Self.sessionCookie, "", maxAge: 0)) }
        return cookies
    }

    /// A page: the template with the labels of the language, the menu and the CSRF token.
    func page(_ name: String, _ web: WebRequest, _ values: [String: Any] = [:], status: HTTPResponse.Status = .ok,
              extraCookies: [String] = []) -> Response {
        var context = values
        context["t"] = WebText.labels(web.language)
        context["lang"] = web.language.rawValue
        context["otherLang"] = web.language == .en ? "ru" : "en"
        context["otherLangName"] = web.language == .en ? "Русский" : "English"
        context["csrf"] = web.csrf
        // A new password's rules, said beside every field that takes one (registration, the
        // profile, claiming an account) before anything is sent.
        context["passwordRules"] = Validator.passwordRules(web.language)
        context["asset"] = assets?.paths ?? [:]
        if let tiles = settings.tiles { context["tiles"] = ["url": tiles.url, "attribution": tiles.attribution] }
        // The staff's pages have the staff's menu, never the patients' log-in and registration.
        if name.hasPrefix("staff") { context["staffArea"] = true }
        if let staff = web.staff, context["staffArea"] == nil {
            context["staffArea"] = true
            context["staffLogin"] = staff.login
            context["frontDesk"] = staff.runsTheFrontDesk
            if context["backHref"] == nil { context["backHref"] = "/staff" }
        }
        if let staff = web.staff { context["clinicAdmin"] = staff.role == .clinicAdmin }
        if let patient = web.patient {
            context["patient"] = ["name": patient.name, "login": patient.login]
            context["unread"] = web.unread > 0 ? web.unread : false
        }
        let html = assets?.library.render(context, withTemplate: name) ?? "<!doctype html><title>clinic</title><p>The web app's files are missing.</p>"
        var fields: HTTPFields = [.contentType: "text/html; charset=utf-8", .contentSecurityPolicy: contentSecurityPolicy]
        for cookie in cookieHeaders(web) + extraCookies { fields.append(HTTPField(name: .setCookie, value: cookie)) }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    func redirect(_ location: String, _ web: WebRequest, extraCookies: [String] = []) -> Response {
        var fields: HTTPFields = [.location: location]
        for cookie in cookieHeaders(web) + extraCookies { fields.append(HTTPField(name: .setCookie, value: cookie)) }
        return Response(status: .seeOther, headers: fields)
    }

    /// A form post: the body parsed, and its CSRF token equal to the cookie's (else 403).
    func form(_ request: Request, _ context: APIContext, _ web: WebRequest) async throws -> [String: String] {
        var request = request
        let body = try await request.collectBody(upTo: 64 * 1024)
        let fields = URLEncodedForm.parse(String(buffer: body))
        try checkCSRF(fields, web)
        return fields
    }

    /// An upload form (`multipart/form-data`, `AttachmentsController.form`): its file, once its
    /// CSRF token is checked (else 403, and nothing is decoded).
    func uploadForm(_ request: Request, _ web: WebRequest) async throws -> AttachmentUpload {
        let form = try await AttachmentsController.form(request, language: web.language)
        try checkCSRF(form.fields, web)
        return form.upload
    }

    /// A form's `csrf` field equal to the request's token (a token tied to a cookie the browser
    /// had before, or to its session).
    func checkCSRF(_ fields: [String: String], _ web: WebRequest) throws {
        guard let sent = fields["csrf"], web.csrfBound || !web.newCSRF, Self.constantTimeEqual(sent, web.csrf) else {
            throw WebRefusal.csrf
        }
    }

    /// A log-in form (patients' and staff's): the per-address limit, the password checked on
    /// the password workers, then the session's cookie and `home`; a refusal shows the form
    /// again with the reason. `logIn` gets the login, the password and whether "Keep me signed
    /// in" was ticked, and gives the token and the cookie's `Max-Age` (nil: until the browser
    /// closes). A staff form kept through a sign-out (`resumable`) is offered again after it.
    func signIn(_ request: Request, _ context: APIContext, _ web: WebRequest, form template: String, cookie name: String,
                home: String, resumable: Bool = false,
                _ logIn: (String, String, Bool) async throws -> (token: String, maxAge: Int?)) async throws -> Response {
        let form = try await form(request, context, web)
        try checkAuthRate(context, web.language)
        let login = form["login"] ?? "", password = form["password"] ?? "", keep = form["keep"] == "yes"
        let kept = resumable ? KeptForm(form) : nil
        do {
            let (token, maxAge) = try await awaited(web.language) { try await logIn(login, password, keep) }
            // A new session, and a new cookie for the forms of the next anonymous visit: a token
            // seen before the log-in is good for nothing after it. Then the page that asked for
            // the log-in, if it was one of ours.
            let cookies = [cookie(name, token, maxAge: maxAge), cookie(Self.csrfCookie, SessionManager.newToken())]
            if let kept {
                // The form's token for the new session (a patient's session in the same browser binds first).
                var resumed = web
                resumed.csrf = csrfToken("session:" + (web.sessionToken ?? token))
                return page("staff-resume", resumed, kept.values, extraCookies: cookies)
            }
            return redirect(URLEncodedForm.localPath(form["next"]) ?? home, web, extraCookies: cookies)
        } catch let failure as APIFailure {
            var values: [String: Any] = ["error": failure.message(in: web.language), "login": login]
            values["next"] = URLEncodedForm.localPath(form["next"])
            if let kept { values.merge(kept.values) { $1 } }
            return page(template, web, values, status: failure.status)
        }
    }

    /// A log-out form: the session ends in the database, its cookie in the browser.
    func signOut(_ request: Request, _ context: APIContext, _ web: WebRequest, cookie name: String, home: String,
                 _ end: (String) async throws -> Void) async throws -> Response {
        _ = try await form(request, context, web)
        // Awaited (the store's `SessionStore`); a failure to end it still signs the browser out.
        if let token = web.cookies[name], token.count == 64 { try? await end(token) }
        return redirect(home, web, extraCookies: [cookie(name, "", maxAge: 0), cookie(Self.csrfCookie, SessionManager.newToken())])
    }

    func work<T: Sendable>(_ web: WebRequest, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await work(web.language, body)
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

enum WebRefusal: Error { case csrf }

enum WebRedirect: Error { case login }
