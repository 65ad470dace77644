import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

// The web pages' request context: who is asking (the session cookie's patient, the staff
// cookie's member), the language and the forms' token, resolved once per page by the
// middleware of the page's group; and every refusal turned into a page.

/// Every page: the `WebRequest` (language, CSRF, the patient of the session cookie) into the
/// context; a refusal becomes the page of the error in the user's language (with the API's
/// status), a form without its CSRF token 403, a page that needs a patient the log-in page.
struct WebPageMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let dependencies: ServerDependencies

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        var web = await dependencies.webRequest(request)
        web.publicBase = dependencies.publicBase(request)
        var context = context
        context.web = web
        context.language = web.language
        do {
            return try await next(request, context)
        } catch WebRedirect.login where request.method == .get {
            // Back to the page asked for once logged in (a booking started, a summary).
            let asked = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
            return dependencies.redirect("/login?next=" + URLEncodedForm.encode(asked), web)
        } catch {
            return dependencies.webFailure(error, web)
        }
    }
}

/// The pages of a signed-in patient: anyone else is sent to the log-in page.
struct WebPatientRequired: RouterMiddleware {
    typealias Context = APIContext

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        _ = try context.webPatient()
        return try await next(request, context)
    }
}

/// The staff pages: the staff member of the staff cookie (nil when signed out, and the page
/// decides); the page is a use of the session (15 minutes idle on the web). A refusal on a signed-in
/// member's page is answered here, with the staff's header (`WebRequest.staff`): the pages'
/// middleware further out no longer knows the member and showed a patient's "Log in".
struct WebStaffSession: RouterMiddleware {
    typealias Context = APIContext
    let dependencies: ServerDependencies

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        var context = context
        if let web = context.web { context.staffMember = await dependencies.staffMember(web) }
        // The pages' menu knows the member too (a clinic admin's has "Reports").
        if let member = context.staffMember { context.web?.staff = member }
        // A form sent after the session ended: kept behind the sign-in page, not lost.
        if let kept = try await dependencies.keptStaffForm(request, context) { return kept }
        do {
            return try await next(request, context)
        } catch {
            guard let member = context.staffMember, var web = context.web, !(error is WebRedirect) else { throw error }
            web.staff = member
            return dependencies.webFailure(error, web)
        }
    }
}

extension APIContext {
    /// The signed-in patient of the session cookie, else a redirect to the log-in page.
    func webPatient() throws -> Client {
        guard let patient = web?.patient else { throw WebRedirect.login }
        return patient
    }
}

extension ServerDependencies {
    /// The page for a failure of a page.
    func webFailure(_ error: any Error, _ web: WebRequest) -> Response {
        switch ErrorMiddleware.clientFault(error) {
        case WebRedirect.login:
            return redirect("/login", web)
        case WebRefusal.csrf:
            return page("error", web, ["message": WebText.labels(web.language)["csrf"] ?? "The form has expired: reload the page and try again."],
                        status: .forbidden)
        case let failure as APIFailure:
            return errorPage(failure.status, failure.message(in: web.language), web)
        case let error as ClinicError:
            return errorPage(HTTPMapping.status(error.code), error.message(in: web.language), web)
        case let error as ServerError:
            return errorPage(error.status, error.message(in: web.language), web)
        case let error as HTTPError:
            // The body's limit, a malformed request: its own status, said in words.
            return page("error", web, ["message": error.body ?? error.status.reasonPhrase], status: error.status)
        default:
            return errorPage(.internalServerError, "", web)
        }
    }

    /// A path nothing answers, asked for by a browser (a `GET` accepting HTML, outside the API's
    /// `/v1/` and `/fhir/`): the error page in the reader's language, never the API's JSON.
    func notFoundPage(_ request: Request) async -> Response? {
        let path = request.uri.path
        guard request.method == .get || request.method == .head, path != "/v1", !path.hasPrefix("/v1/"),
              !path.hasPrefix(FHIROutcome.prefix), request.headers[values: .accept].contains(where: { $0.contains("text/html") })
        else { return nil }
        let web = await webRequest(request)
        return errorPage(.notFound, ServerError(.notFound, .routeNotFound, path).message(in: web.language), web)
    }

    /// The error page; a 500 says no more than that something went wrong.
    func errorPage(_ status: HTTPResponse.Status, _ message: String, _ web: WebRequest) -> Response {
        let message = status == .internalServerError ? Strings.text(.internalError, web.language, ["-"]) : message
        return page("error", web, ["message": message], status: status)
    }

    /// The staff member of the staff cookie; the page is a use of the session (`ServerSettings.staffWebIdleMinutes`).
    func staffMember(_ web: WebRequest) async -> StaffMember? {
        guard let token = web.cookies[Self.staffCookie], token.count == 64,
              let member = try? await system.staff.signedIn(token: token) else { return nil }
        await touch(token: token) { [system] in try await system.staff.touch(token: token) }
        return member
    }
}

/// A staff form sent after its session ended (issue 55: 15 minutes idle at a shared front desk):
/// what was typed rides, in hidden fields, through the sign-in page (`kept.NAME`), and is then
/// offered for sending to the page it was meant for (`resume`, a staff path). The CSRF check
/// of the form as sent came first, so nothing another site posts is carried.
struct KeptForm {
    let resume: String
    let fields: [(name: String, value: String)]

    /// A form's fields to keep, with the path it was sent to (a staff page of ours).
    init?(resume path: String, fields form: [String: String]) {
        guard let path = URLEncodedForm.localPath(path), path.hasPrefix("/staff/") else { return nil }
        resume = path
        fields = form.filter { $0.key != "csrf" && $0.key != "password" }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The kept form as the sign-in page carries it; nil when it carries none.
    init?(_ signIn: [String: String]) {
        var kept: [String: String] = [:]
        for (key, value) in signIn where key.hasPrefix("kept.") { kept[String(key.dropFirst(5))] = value }
        guard let path = signIn["resume"] else { return nil }
        self.init(resume: path, fields: kept)
    }

    /// The pages' values: the path, the fields, and what of them is words (a note, a reason)
    /// shown to the person deciding whether to send it again.
    var values: [String: Any] {
        let shown = fields.map(\.value).filter { $0.unicodeScalars.contains(where: CharacterSet.letters.contains) }
        return ["resume": resume, "kept": fields.map { ["name": $0.name, "value": $0.value] }, "shown": shown,
                "shownAny": !shown.isEmpty]
    }
}

extension ServerDependencies {
    /// A staff page's form whose session has ended (the browser still sends the staff cookie):
    /// the sign-in page, keeping what was typed (`KeptForm`); nil for anything else.
    func keptStaffForm(_ request: Request, _ context: APIContext) async throws -> Response? {
        guard context.staffMember == nil, request.method == .post, let web = context.web,
              web.cookies[Self.staffCookie].map({ $0.count == 64 }) == true,
              request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true,
              request.uri.path.hasPrefix("/staff/")
        else { return nil }
        let fields = try await form(request, context, web)
        guard let kept = KeptForm(resume: request.uri.path, fields: fields) else { return nil }
        return page("staff-login", web, kept.values, status: .unauthorized)
    }
}
