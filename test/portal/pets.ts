// A small OpenAPI document for the API reference's tests: two tags in an order of their own, a
// path parameter shared by two operations, a query array, a header, a JSON body whose schema is a
// $ref to a second file (nested object, array of objects, a schema that holds itself), response
// headers and schemas, examples, scopes, a deprecated and an untagged operation, and markup in
// descriptions that must come out as text. No `.test` suffix: the runner must not run it alone.
import { writeFileSync } from 'node:fs';
import path from 'node:path';

export const PETS = `openapi: 3.1.0
info:
  title: Pet store
  version: '2.1'
  description: |
    Pets and their <b>owners</b>.

    Second paragraph.
servers:
  - url: https://pets.example.com/v2
tags:
  - name: pets
    description: Pets for sale.
  - name: owners
    description: The people who own them.
security:
  - oauth: ['pets:read']
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: /oauth2/token
          scopes: { 'pets:read': read pets, 'pets:write': change pets }
paths:
  /owners:
    get:
      operationId: listOwners
      tags: [owners]
      summary: Every owner
      deprecated: true
      parameters:
        - { name: X-Trace, in: header, description: A trace id, schema: { type: string } }
        - { name: Authorization, in: header, description: ignored, as OpenAPI says, schema: { type: string } }
      responses:
        '200':
          description: The owners
          content:
            application/json:
              schema: { type: array, items: { $ref: './schemas.yaml#/components/schemas/Owner' } }
  /pets/{petId}:
    parameters:
      - { name: petId, in: path, required: true, description: "The pet's id", schema: { type: integer, minimum: 1 }, example: 42 }
    get:
      operationId: getPet
      tags: [pets]
      summary: One pet
      description: "Returns the pet. <script>alert('x')</script>"
      parameters:
        - { name: fields, in: query, explode: false, schema: { type: array, items: { type: string, enum: [name, tags] } } }
      responses:
        '200':
          description: The pet
          headers:
            X-Rate-Left: { description: Calls left, schema: { type: integer } }
          content:
            application/json:
              schema: { $ref: './schemas.yaml#/components/schemas/Pet' }
              example: { id: 42, name: Rex }
        '404': { description: No such pet }
    put:
      operationId: updatePet
      tags: [pets]
      summary: Change a pet
      security:
        - oauth: ['pets:write']
      requestBody:
        required: true
        description: The pet as it should be.
        content:
          application/json:
            schema: { $ref: './schemas.yaml#/components/schemas/Pet' }
            examples:
              rex: { summary: Rex, value: { name: Rex, owner: { name: Ada, address: { city: London } }, tags: [good] } }
      responses:
        '200':
          description: The pet, changed
          content:
            application/json:
              schema: { $ref: './schemas.yaml#/components/schemas/Pet' }
  /health:
    get:
      operationId: health
      security: []
      responses: { '204': { description: Up } }
`;

export const SCHEMAS = `components:
  schemas:
    Pet:
      type: object
      description: A pet of the store.
      required: [name]
      properties:
        id: { type: integer, format: int64, readOnly: true }
        name: { type: string, minLength: 1, maxLength: 64, description: "Its name, <i>escaped</i>" }
        owner: { $ref: '#/components/schemas/Owner' }
        tags: { type: array, maxItems: 5, items: { type: string, enum: [good, small] } }
        vaccinations:
          type: array
          items:
            type: object
            required: [name]
            properties:
              name: { type: string }
              on: { type: string, format: date }
        parent: { $ref: '#/components/schemas/Pet' }
    Owner:
      type: object
      required: [name]
      properties:
        name: { type: string }
        address:
          type: object
          properties:
            city: { type: string }
            kind: { type: string, enum: [home, work], default: home }
`;

/** Writes the document (pets.yaml) and the file its schemas are in (schemas.yaml) into `dir`. */
export function writePets(dir: string): void {
  writeFileSync(path.join(dir, 'pets.yaml'), PETS);
  writeFileSync(path.join(dir, 'schemas.yaml'), SCHEMAS);
}
