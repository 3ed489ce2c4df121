import { expect } from 'chai';
import { redactUrl } from '../../src/logging/logger.ts';

describe('redactUrl', () => {
  const cases: Array<[string, string]> = [
    ['mongodb://app:s3cret@db1:27017,db2:27017/annals?replicaSet=rs0', 'mongodb://***@db1:27017,db2:27017/annals?replicaSet=rs0'],
    ['esdb://admin:changeit@localhost:2113?tls=false', 'esdb://***@localhost:2113?tls=false'],
    ['mongodb+srv://u:p%40ss@cluster.example.net/db', 'mongodb+srv://***@cluster.example.net/db'],
    ['smtp://only-user@mail:25', 'smtp://***@mail:25'],
    ['https://user:pa@ss@host/path', 'https://***@host/path'],
    ['failed: connect mongodb://a:b@h1/x and esdb://c:d@h2', 'failed: connect mongodb://***@h1/x and esdb://***@h2'],
  ];
  for (const [input, output] of cases) {
    it(`${input} -> ${output}`, () => {
      expect(redactUrl(input)).to.equal(output);
    });
  }

  it('leaves URLs without credentials alone, an @ in the path or query included', () => {
    for (const url of ['https://example.com/a?email=x@y.z', 'mongodb://localhost:27017/annals', 'see user@example.com']) {
      expect(redactUrl(url)).to.equal(url);
    }
  });

  it('keeps JSON text valid', () => {
    const json = JSON.stringify({ url: 'mongodb://u:p@h/db', note: 'http://a', mail: 'x@y' });
    const redacted = redactUrl(json);
    expect(JSON.parse(redacted)).to.deep.equal({ url: 'mongodb://***@h/db', note: 'http://a', mail: 'x@y' });
  });
});
