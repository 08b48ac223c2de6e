import { Test } from '@nestjs/testing';
import { ExpressionEngine, ExpressionsModule } from './index';

describe('ExpressionsModule', () => {
  it('provides one ExpressionEngine', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ExpressionsModule] }).compile();
    const engine = moduleRef.get(ExpressionEngine);
    expect(engine.render('{{ data.n }}', { data: { n: 1 } })).toBe(1);
    await moduleRef.close();
  });
});
