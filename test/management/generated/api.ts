// Generated from src/management/document.ts by `npm run docs:management` (openapi-typescript); do not edit by hand.

export interface paths {
    "/developers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List developers, by email */
        get: operations["listDevelopers"];
        put?: never;
        /** Create a developer (verified: the operator vouches for the address) */
        post: operations["createDeveloper"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/developers/{developer}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The developer's id or email. */
                developer: components["parameters"]["developer"];
            };
            cookie?: never;
        };
        /** Read a developer */
        get: operations["getDeveloper"];
        put?: never;
        post?: never;
        /** Delete a developer with their apps, keys and tokens */
        delete: operations["deleteDeveloper"];
        options?: never;
        head?: never;
        /** Disable or enable a developer: a disabled one’s tokens stop working at once */
        patch: operations["updateDeveloper"];
        trace?: never;
    };
    "/developers/{developer}/invitations": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The developer's id or email. */
                developer: components["parameters"]["developer"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A one-time code with which the developer sets a portal password */
        post: operations["inviteDeveloper"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/apps": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List apps with their keys, by developer email and name */
        get: operations["listApps"];
        put?: never;
        /** Register an app for a product: approved at once; its key and (unless public) secret are in the answer, once */
        post: operations["createApp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/apps/{app}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        /** Read an app and its keys (never a secret) */
        get: operations["getApp"];
        put?: never;
        post?: never;
        /** Delete an app with its keys: its tokens stop working at once */
        delete: operations["deleteApp"];
        options?: never;
        head?: never;
        /** Approve, disable or enable an app (a disabled one’s tokens stop working at once), or replace its redirect URIs */
        patch: operations["updateApp"];
        trace?: never;
    };
    "/apps/{app}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        /** List an app's keys */
        get: operations["listKeys"];
        put?: never;
        /** A new key and secret; the earlier keys work until the overlap ends (portal.keyOverlap) */
        post: operations["rotateKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/apps/{app}/keys/import": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Register a key and secret made by another gateway (Apigee, Kong): the client keeps working unchanged */
        post: operations["importKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/apps/{app}/keys/{key}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
                key: components["parameters"]["key"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Revoke a key: no new tokens with it, and its tokens stop working */
        post: operations["revokeKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Revoke every token of an app, or of a user across every app (log out everywhere) */
        post: operations["revokeTokens"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/products": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the API products the configuration declares, with their routes and scopes */
        get: operations["listProducts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/products/{product}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read an API product */
        get: operations["getProduct"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Calls per app, product, route and status class per hour (management clients' own calls are left out) */
        get: operations["listUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Developer: {
            id: string;
            email: string;
            name: string;
            /** @enum {unknown} */
            status: "active" | "disabled";
            /** @description Whether the developer proved the address (an operator vouches for the ones they create). */
            verified: boolean;
            /** @description Epoch milliseconds. */
            createdAt: number;
        };
        NewDeveloper: {
            email: string;
            name: string;
        };
        DeveloperUpdate: {
            /** @enum {unknown} */
            status?: "active" | "disabled";
        };
        InvitationRequest: {
            /** @default 7 */
            validDays?: number;
        };
        Invitation: {
            email: string;
            /** @description Shown once (not in a replay): the developer enters it at sign-up in the portal. */
            code?: string;
            /** @description Epoch milliseconds. */
            expiresAt: number;
            /** @description The sign-up page with the code filled in, when the config has a portal; shown once too. */
            link?: string;
        };
        Credential: {
            /** @description The client id. */
            key: string;
            appId: string;
            /** @enum {unknown} */
            status: "approved" | "revoked";
            /** @description Epoch milliseconds after which it stops working (a rotation’s overlap); null: no expiry. */
            expiresAt: number | null;
            /** @description Epoch milliseconds. */
            createdAt: number;
        };
        AppFields: {
            id: string;
            developerId: string;
            developerEmail: string;
            name: string;
            product: string;
            /** @enum {unknown} */
            status: "active" | "disabled";
            /** @enum {unknown} */
            approval: "approved" | "pending";
            /** @description Epoch milliseconds. */
            createdAt: number;
            /**
             * @description confidential: a key and a secret (a server); public: a key only (a single-page, mobile or command-line app, which cannot keep a secret).
             * @enum {unknown}
             */
            type: "confidential" | "public";
            /** @description Where the authorization endpoint may send users back, in the order registered. */
            redirectUris: string[];
            certificateAuth?: components["schemas"]["CertificateAuth"];
        };
        /** @description RFC 8705 §2: how the app authenticates with a client certificate (then its secret no longer does); absent: it does not. */
        CertificateAuth: {
            /** @constant */
            method: "tls_client_auth";
            /** @description The subject DN (RFC 4514), or one subjectAltName entry, a certificate of listen.tls.clientCa must carry. */
            subject: {
                dn: string;
            } | {
                /** @enum {unknown} */
                san: "dns" | "uri" | "ip" | "email";
                value: string;
            };
        } | {
            /** @constant */
            method: "self_signed_tls_client_auth";
            certificates: {
                /** @description base64url SHA-256 of the DER certificate (x5t#S256). */
                thumbprint: string;
                /** @description Empty when registered by thumbprint alone. */
                subject: string;
                /** @description Its notAfter, epoch milliseconds; null when registered by thumbprint alone. */
                expiresAt: number | null;
            }[];
        };
        /** @description Replaces how the app authenticates with a client certificate; method none: by its secret again. */
        CertificateAuthInput: {
            /** @constant */
            method: "tls_client_auth";
            subjectDn: string;
        } | {
            /** @constant */
            method: "tls_client_auth";
            /** @enum {unknown} */
            san: "dns" | "uri" | "ip" | "email";
            value: string;
        } | {
            /** @constant */
            method: "self_signed_tls_client_auth";
            /** @description Each a PEM certificate, or its SHA-256 thumbprint (base64url, or hex as openssl prints it). */
            certificates: string[];
        } | {
            /** @constant */
            method: "none";
        };
        App: components["schemas"]["AppFields"] & {
            credentials: components["schemas"]["Credential"][];
        };
        CreatedApp: components["schemas"]["AppFields"] & {
            key: string;
            /** @description Shown once (not in a replay): only its keyed hash is stored. A public app has none. */
            secret?: string;
        };
        RotatedKey: components["schemas"]["AppFields"] & {
            key: string;
            /** @description Shown once (not in a replay). A public app has none. */
            secret?: string;
            /** @description Until when the earlier keys work. */
            overlapUntil: number;
        };
        NewApp: {
            /** @description The developer's id or email. */
            developer: string;
            name: string;
            product: string;
            /**
             * @description confidential: a key and a secret (a server); public: a key only (a single-page, mobile or command-line app, which cannot keep a secret).
             * @default confidential
             * @enum {unknown}
             */
            type?: "confidential" | "public";
            /** @description Required (at least one) for a product with the authorization_code grant, refused for any other: https, http on a loopback address, or a private-use scheme; no fragment; at most 10. */
            redirectUris?: string[];
        };
        AppUpdate: {
            /** @enum {unknown} */
            status?: "active" | "disabled";
            /** @constant */
            approval?: "approved";
            /** @description Replaces every redirect URI of the app, under the rules of registration. */
            redirectUris?: string[];
            certificateAuth?: components["schemas"]["CertificateAuthInput"];
        };
        KeyImport: {
            /** @description The client id the other gateway issued. */
            key: string;
            /** @description Its secret: hashed at once, never stored, logged or returned. */
            secret: string;
        };
        TokenRevocation: {
            /** @description The app's id. */
            app: string;
        } | {
            /** @description The user's subject, as the authorization server named it. */
            subject: string;
        };
        Revoked: {
            /** @description How many tokens were revoked. */
            revoked: number;
        };
        Route: {
            name: string;
            method: string;
            path: string;
            scopes: string[];
        };
        Product: {
            name: string;
            displayName: string;
            description: string;
            scopes: string[];
            grants: string[];
            /** @enum {unknown} */
            approval: "auto" | "manual";
            visible: boolean;
            /** @description Seconds. */
            accessTokenLifetime: number;
            /** @description Seconds. */
            refreshTokenLifetime: number;
            routes: components["schemas"]["Route"][];
        };
        Usage: {
            /** @description Epoch milliseconds of the hour's start. */
            hour: number;
            /** @description The app's id. */
            app: string;
            product: string;
            route: string;
            /** @enum {unknown} */
            statusClass: "1xx" | "2xx" | "3xx" | "4xx" | "5xx";
            count: number;
            /** @description The calls by duration: how many took up to 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000 ms, each bound's bucket holding those above the bound before it, and the last those above 10000 ms. Calls counted before durations were are in none. */
            latency: number[];
        };
        DeveloperList: {
            items: components["schemas"]["Developer"][];
            /** @description The cursor of the next page; null on the last. */
            next: string | null;
        };
        AppList: {
            items: components["schemas"]["App"][];
            /** @description The cursor of the next page; null on the last. */
            next: string | null;
        };
        CredentialList: {
            items: components["schemas"]["Credential"][];
            /** @description The cursor of the next page; null on the last. */
            next: string | null;
        };
        ProductList: {
            items: components["schemas"]["Product"][];
            /** @description The cursor of the next page; null on the last. */
            next: string | null;
        };
        UsageList: {
            items: components["schemas"]["Usage"][];
            /** @description The cursor of the next page; null on the last. */
            next: string | null;
        };
        Problem: {
            type: string;
            title: string;
            status: number;
            detail: string;
            /** @description Stable and machine-readable: unknown_app, duplicate_developer, key_taken, insufficient_scope, precondition_failed… */
            code: string;
            /** @description Each validation failure, with where it was. */
            errors?: Record<string, never>[];
        };
    };
    responses: {
        /** @description The request is malformed: the problem says what is wrong. */
        Problem400: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description No valid access token (WWW-Authenticate says why). */
        Problem401: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The token is not a management client’s, or lacks the scope. */
        Problem403: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description No such resource. */
        Problem404: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The request conflicts with what is there (a duplicate, a taken key, an Idempotency-Key in use). */
        Problem409: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description If-Match names another version than the current one. */
        Problem412: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The Idempotency-Key was used for another request. */
        Problem422: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The store is unavailable; nothing was changed: try again. */
        Problem503: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
    };
    parameters: {
        /** @description The developer's id or email. */
        developer: string;
        /** @description The app's id. */
        app: string;
        key: string;
        /** @description At most this many items (default 100). */
        limit: number;
        /** @description The `next` of the previous page. */
        cursor: string;
        /** @description A retry with the same key and body gets the first answer again instead of creating twice; kept 24 hours. */
        idempotencyKey: string;
        /** @description The ETag of the version the change is meant for (412 when it is not the current one). */
        ifMatch: string;
    };
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listDevelopers: {
        parameters: {
            query?: {
                /** @description At most this many items (default 100). */
                limit?: components["parameters"]["limit"];
                /** @description The `next` of the previous page. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of developers. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeveloperList"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
        };
    };
    createDeveloper: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and body gets the first answer again instead of creating twice; kept 24 hours. */
                "Idempotency-Key"?: components["parameters"]["idempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewDeveloper"];
            };
        };
        responses: {
            /** @description The developer. */
            201: {
                headers: {
                    /** @description The version of the resource, for If-Match. */
                    ETag?: string;
                    /** @description true when this is the answer of an earlier request with the same Idempotency-Key, without the secret that answer showed. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Developer"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            409: components["responses"]["Problem409"];
            422: components["responses"]["Problem422"];
        };
    };
    getDeveloper: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The developer's id or email. */
                developer: components["parameters"]["developer"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The developer. */
            200: {
                headers: {
                    /** @description The version of the resource, for If-Match. */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Developer"];
                };
            };
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
        };
    };
    deleteDeveloper: {
        parameters: {
            query?: never;
            header?: {
                /** @description The ETag of the version the change is meant for (412 when it is not the current one). */
                "If-Match"?: components["parameters"]["ifMatch"];
            };
            path: {
                /** @description The developer's id or email. */
                developer: components["parameters"]["developer"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            412: components["responses"]["Problem412"];
        };
    };
    updateDeveloper: {
        parameters: {
            query?: never;
            header?: {
                /** @description The ETag of the version the change is meant for (412 when it is not the current one). */
                "If-Match"?: components["parameters"]["ifMatch"];
            };
            path: {
                /** @description The developer's id or email. */
                developer: components["parameters"]["developer"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeveloperUpdate"];
            };
        };
        responses: {
            /** @description The developer as it is now. */
            200: {
                headers: {
                    /** @description The version of the resource, for If-Match. */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Developer"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            412: components["responses"]["Problem412"];
        };
    };
    inviteDeveloper: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and body gets the first answer again instead of creating twice; kept 24 hours. */
                "Idempotency-Key"?: components["parameters"]["idempotencyKey"];
            };
            path: {
                /** @description The developer's id or email. */
                developer: components["parameters"]["developer"];
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["InvitationRequest"];
            };
        };
        responses: {
            /** @description The invitation; its code is shown only now. */
            201: {
                headers: {
                    /** @description true when this is the answer of an earlier request with the same Idempotency-Key, without the secret that answer showed. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Invitation"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            409: components["responses"]["Problem409"];
            422: components["responses"]["Problem422"];
        };
    };
    listApps: {
        parameters: {
            query?: {
                /** @description Only this developer's apps (id or email). */
                developer?: string;
                /** @description Only the apps of this product. */
                product?: string;
                /** @description Only the apps of this name. */
                name?: string;
                /** @description Only the app holding this key. */
                key?: string;
                /** @description At most this many items (default 100). */
                limit?: components["parameters"]["limit"];
                /** @description The `next` of the previous page. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of apps. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AppList"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
        };
    };
    createApp: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and body gets the first answer again instead of creating twice; kept 24 hours. */
                "Idempotency-Key"?: components["parameters"]["idempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewApp"];
            };
        };
        responses: {
            /** @description The app with its key and secret. */
            201: {
                headers: {
                    /** @description true when this is the answer of an earlier request with the same Idempotency-Key, without the secret that answer showed. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedApp"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            409: components["responses"]["Problem409"];
            422: components["responses"]["Problem422"];
        };
    };
    getApp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The app. */
            200: {
                headers: {
                    /** @description The version of the resource, for If-Match. */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["App"];
                };
            };
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
        };
    };
    deleteApp: {
        parameters: {
            query?: never;
            header?: {
                /** @description The ETag of the version the change is meant for (412 when it is not the current one). */
                "If-Match"?: components["parameters"]["ifMatch"];
            };
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            412: components["responses"]["Problem412"];
        };
    };
    updateApp: {
        parameters: {
            query?: never;
            header?: {
                /** @description The ETag of the version the change is meant for (412 when it is not the current one). */
                "If-Match"?: components["parameters"]["ifMatch"];
            };
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AppUpdate"];
            };
        };
        responses: {
            /** @description The app as it is now. */
            200: {
                headers: {
                    /** @description The version of the resource, for If-Match. */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["App"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            412: components["responses"]["Problem412"];
        };
    };
    listKeys: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The app's keys. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CredentialList"];
                };
            };
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
        };
    };
    rotateKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and body gets the first answer again instead of creating twice; kept 24 hours. */
                "Idempotency-Key"?: components["parameters"]["idempotencyKey"];
            };
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description The new key and secret, shown once. */
            201: {
                headers: {
                    /** @description true when this is the answer of an earlier request with the same Idempotency-Key, without the secret that answer showed. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RotatedKey"];
                };
            };
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            409: components["responses"]["Problem409"];
            422: components["responses"]["Problem422"];
        };
    };
    importKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and body gets the first answer again instead of creating twice; kept 24 hours. */
                "Idempotency-Key"?: components["parameters"]["idempotencyKey"];
            };
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["KeyImport"];
            };
        };
        responses: {
            /** @description The key (never its secret). */
            201: {
                headers: {
                    /** @description true when this is the answer of an earlier request with the same Idempotency-Key, without the secret that answer showed. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Credential"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            409: components["responses"]["Problem409"];
            422: components["responses"]["Problem422"];
        };
    };
    revokeKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The app's id. */
                app: components["parameters"]["app"];
                key: components["parameters"]["key"];
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description The key as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Credential"];
                };
            };
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
            409: components["responses"]["Problem409"];
        };
    };
    revokeTokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRevocation"];
            };
        };
        responses: {
            /** @description How many tokens were revoked. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Revoked"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
        };
    };
    listProducts: {
        parameters: {
            query?: {
                /** @description At most this many items (default 100). */
                limit?: components["parameters"]["limit"];
                /** @description The `next` of the previous page. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of products. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProductList"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
        };
    };
    getProduct: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                product: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The product. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Product"];
                };
            };
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
            404: components["responses"]["Problem404"];
        };
    };
    listUsage: {
        parameters: {
            query?: {
                /** @description From this hour on (RFC 3339); default: 24 hours ago. */
                from?: string;
                /** @description Up to this time, not included (RFC 3339); default: now. */
                to?: string;
                /** @description Only this app's calls (its id). */
                app?: string;
                product?: string;
                route?: string;
                /** @description At most this many items (default 100). */
                limit?: components["parameters"]["limit"];
                /** @description The `next` of the previous page. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of counts, by hour, app, route and status class. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UsageList"];
                };
            };
            400: components["responses"]["Problem400"];
            401: components["responses"]["Problem401"];
            403: components["responses"]["Problem403"];
        };
    };
}
