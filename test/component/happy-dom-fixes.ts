/**
 * Makes happy-dom answer like a browser where DOMPurify depends on it.
 * DOMPurify reads a node's name through `Node.prototype`'s `nodeName` getter
 * (so a clobbered property cannot lie to it); happy-dom defines the real
 * getter only on subclasses and answers '' on `Node.prototype`, so DOMPurify
 * would see every element as an unknown tag and drop it. The getter here
 * defers to the subclass's, as a browser's does. Import this first in a
 * component test, before anything imports DOMPurify.
 */
const base = Object.getOwnPropertyDescriptor(Node.prototype, 'nodeName')
if (base?.get) {
  const original = base.get
  Object.defineProperty(Node.prototype, 'nodeName', {
    configurable: true,
    get(this: Node): string {
      for (let proto = Object.getPrototypeOf(this); proto && proto !== Node.prototype; proto = Object.getPrototypeOf(proto)) {
        const own = Object.getOwnPropertyDescriptor(proto, 'nodeName')
        if (own?.get) return own.get.call(this) as string
      }
      return original.call(this) as string
    }
  })
}

export {}
